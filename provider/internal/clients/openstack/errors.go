package openstack

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/c5c3/consumer-plane/provider/internal/terminal"
)

// Terminal marks err as not retryable (see package terminal).
func Terminal(err error) error { return terminal.Wrap(err) }

// IsTerminal reports whether retrying cannot fix err.
func IsTerminal(err error) bool { return terminal.Is(err) }

// IsNotFound reports whether OpenStack answered 404.
func IsNotFound(err error) bool {
	return gophercloud.ResponseCodeIs(err, http.StatusNotFound)
}

// IsConflict reports whether OpenStack answered 409.
func IsConflict(err error) bool {
	return gophercloud.ResponseCodeIs(err, http.StatusConflict)
}

// Classify wraps err from an API call: 400, 403 and 422 are terminal (the
// request itself is wrong or not allowed); everything else (5xx, 429,
// connection errors, 409 races) is returned as is and retried with backoff.
func Classify(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	wrapped := fmt.Errorf(format+": %w", append(args, err)...)
	var code gophercloud.ErrUnexpectedResponseCode
	if errors.As(err, &code) {
		switch code.Actual {
		case http.StatusBadRequest, http.StatusForbidden, http.StatusUnprocessableEntity, http.StatusRequestEntityTooLarge:
			return Terminal(wrapped)
		}
	}
	return wrapped
}

// classifyAuth explains a failed authentication. Wrong credentials are
// terminal: asking Keystone again with the same ones only fills its log.
func classifyAuth(a gophercloud.AuthOptions, err error) error {
	who := a.Username
	if who == "" {
		who = a.UserID
	}
	if a.ApplicationCredentialID != "" || a.ApplicationCredentialName != "" {
		who = "application credential " + a.ApplicationCredentialID + a.ApplicationCredentialName
	}
	switch {
	case gophercloud.ResponseCodeIs(err, http.StatusUnauthorized):
		return Terminal(fmt.Errorf("keystone at %s refused the credentials of %q (401): check the credentials Secret of the ProviderConfig", a.IdentityEndpoint, who))
	case gophercloud.ResponseCodeIs(err, http.StatusForbidden), gophercloud.ResponseCodeIs(err, http.StatusBadRequest):
		return Terminal(fmt.Errorf("keystone at %s refused to authenticate %q: %w", a.IdentityEndpoint, who, err))
	}
	return fmt.Errorf("cannot authenticate to keystone at %s as %q: %w", a.IdentityEndpoint, who, err)
}

const (
	maxRetries   = 3
	maxRetryWait = 5 * time.Second
)

// retryBackoff waits before retrying a 429 (rate limited): as long as the
// Retry-After header asks, at most maxRetryWait, so one throttled call cannot
// hold a reconcile worker for long; after maxRetries the reconcile fails and
// the controller's own backoff takes over.
func retryBackoff(ctx context.Context, e *gophercloud.ErrUnexpectedResponseCode, _ error, attempt uint) error {
	wait := backoff(attempt)
	if e != nil && e.ResponseHeader != nil {
		if s, err := strconv.Atoi(e.ResponseHeader.Get("Retry-After")); err == nil {
			wait = min(time.Duration(s)*time.Second, maxRetryWait)
		}
	}
	return sleep(ctx, wait)
}

// retryIdempotent retries a failed call when the failure says the service was
// briefly unavailable (502, 503, 504) or the connection broke. Requests that
// create something (POST) are retried only when the server said it did not
// process them (503), never after a broken connection, where the object may
// already exist: the controller's adoption handles that on its next pass.
func retryIdempotent(ctx context.Context, method, _ string, _ *gophercloud.RequestOpts, err error, attempt uint) error {
	if attempt > maxRetries {
		return err
	}
	var code gophercloud.ErrUnexpectedResponseCode
	switch {
	case errors.As(err, &code):
		switch code.Actual {
		case http.StatusServiceUnavailable:
		case http.StatusBadGateway, http.StatusGatewayTimeout:
			if method == http.MethodPost {
				return err
			}
		default:
			return err
		}
	case isConnectionError(err):
		if method == http.MethodPost {
			return err
		}
	default:
		return err
	}
	if serr := sleep(ctx, backoff(attempt)); serr != nil {
		return err
	}
	return nil
}

// A BusyError says a request was not sent: the session already had as
// many requests under way as it may, for longer than a request waits. The
// endpoint answers slowly or not at all; the reconcile is retried later
// and its worker is free for other clouds meanwhile.
type BusyError struct {
	Host   string
	Calls  int
	Waited time.Duration
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("%d requests to %s with these credentials have been under way for over %s (the endpoint answers slowly or not at all); not sending more, trying again later",
		e.Calls, e.Host, e.Waited)
}

// OutcomeUnknown reports whether a request may have been carried out though
// its answer never arrived: the context ended or the connection failed
// while it was under way.
func OutcomeUnknown(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || isConnectionError(err)
}

func isConnectionError(err error) bool {
	var ne net.Error
	var oe *net.OpError
	return errors.As(err, &oe) || (errors.As(err, &ne) && ne.Timeout())
}

func backoff(attempt uint) time.Duration {
	return min(250*time.Millisecond<<attempt, maxRetryWait)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
