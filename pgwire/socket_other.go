//go:build !linux

package pgwire

import "net"

// socketUnread cannot ask the kernel here: a CancelRequest that overtakes
// its query's bytes on the way into the pump finds the session idle.
func socketUnread(net.Conn) int { return 0 }
