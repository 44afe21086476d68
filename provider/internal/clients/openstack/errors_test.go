package openstack

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
)

func code(n int) error { return gophercloud.ErrUnexpectedResponseCode{Actual: n} }

func TestClassify(t *testing.T) {
	cases := map[string]struct {
		err      error
		terminal bool
	}{
		"bad request":        {err: code(http.StatusBadRequest), terminal: true},
		"forbidden":          {err: code(http.StatusForbidden), terminal: true},
		"unprocessable":      {err: code(http.StatusUnprocessableEntity), terminal: true},
		"conflict is a race": {err: code(http.StatusConflict)},
		"unavailable":        {err: code(http.StatusServiceUnavailable)},
		"rate limited":       {err: code(http.StatusTooManyRequests)},
		"connection refused": {err: &net.OpError{Op: "dial", Err: errors.New("connection refused")}},
		"already terminal":   {err: Terminal(errors.New("x")), terminal: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := Classify(tc.err, "cannot %s", "do it")
			if IsTerminal(err) != tc.terminal {
				t.Errorf("IsTerminal(Classify(%v)) = %v, want %v", tc.err, IsTerminal(err), tc.terminal)
			}
			if !strings.Contains(err.Error(), tc.err.Error()) {
				t.Errorf("Classify lost the cause: %v", err)
			}
		})
	}
	if Classify(nil, "x") != nil {
		t.Error("Classify(nil) != nil")
	}
}

func TestRetryIdempotent(t *testing.T) {
	ctx := context.Background()
	broken := &net.OpError{Op: "read", Err: errors.New("connection reset")}
	cases := map[string]struct {
		method string
		err    error
		retry  bool
	}{
		"GET after 503":                   {method: http.MethodGet, err: code(503), retry: true},
		"POST after 503 (not processed)":  {method: http.MethodPost, err: code(503), retry: true},
		"POST after 502 may have created": {method: http.MethodPost, err: code(502)},
		"DELETE after 504":                {method: http.MethodDelete, err: code(504), retry: true},
		"GET after a broken connection":   {method: http.MethodGet, err: broken, retry: true},
		"POST after a broken connection":  {method: http.MethodPost, err: broken},
		"GET after 404":                   {method: http.MethodGet, err: code(404)},
		"GET after 400":                   {method: http.MethodGet, err: code(400)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := retryIdempotent(ctx, tc.method, "", nil, tc.err, 0) == nil
			if got != tc.retry {
				t.Errorf("retry = %v, want %v", got, tc.retry)
			}
		})
	}
	if retryIdempotent(ctx, http.MethodGet, "", nil, code(503), maxRetries+1) == nil {
		t.Error("retried beyond maxRetries")
	}
}
