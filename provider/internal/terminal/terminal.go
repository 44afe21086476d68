// Package terminal marks errors that retrying cannot fix: bad input,
// missing permissions, a name taken by someone else, an object owned by
// another system. Controllers surface them in the Synced condition prefixed
// "terminal:", so `kubectl describe` tells a platform engineer to change the
// spec or the backend rather than wait. Every client package of the
// provider (OpenStack, OVN, Ceph) uses the same mark.
package terminal

import "errors"

type terminalError struct{ err error }

func (e terminalError) Error() string { return "terminal: " + e.err.Error() }
func (e terminalError) Unwrap() error { return e.err }

// Wrap marks err as not retryable.
func Wrap(err error) error {
	if err == nil || Is(err) {
		return err
	}
	return terminalError{err: err}
}

// Is reports whether retrying cannot fix err.
func Is(err error) bool {
	var t terminalError
	return errors.As(err, &t)
}
