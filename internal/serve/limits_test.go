package serve

import (
	"fmt"
	"net"
	"testing"
	"time"
)

// A scan from many addresses can't grow the limiter past maxTracked nor make each refused key
// walk the whole map; IPv6 addresses of one /64 count as one.
func TestAuthLimiterIsBounded(t *testing.T) {
	now := time.Unix(0, 0)
	l := newAuthLimiter(3, 10*time.Minute, func() time.Time { return now })
	start := time.Now()
	for i := range 3 * maxTracked {
		l.fail(fmt.Sprintf("2001:db8:%x:%x::/64", i>>16, i&0xffff))
	}
	if n := len(l.addrs); n > maxTracked {
		t.Errorf("%d addresses remembered, want at most %d", n, maxTracked)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("30,000 refused keys from new addresses took %v: the limiter walks its map per key", d)
	}
	// A refused address stays refused even when the map is full of scanners.
	l2 := newAuthLimiter(2, 10*time.Minute, func() time.Time { return now })
	l2.fail("198.51.100.7")
	l2.fail("198.51.100.7")
	for i := range 2 * maxTracked {
		l2.fail(fmt.Sprintf("10.%d.%d.%d", i>>16&0xff, i>>8&0xff, i&0xff))
	}
	if blocked, _ := l2.blocked("198.51.100.7"); !blocked {
		t.Error("the address that reached the limit was evicted by the scan")
	}

	a := host(&net.TCPAddr{IP: net.ParseIP("2001:db8:1:2:aaaa::1"), Port: 5})
	b := host(&net.TCPAddr{IP: net.ParseIP("2001:db8:1:2:bbbb::9"), Port: 6})
	c := host(&net.TCPAddr{IP: net.ParseIP("2001:db8:1:3::1"), Port: 6})
	if a != b || a == c {
		t.Errorf("IPv6 /64: %q %q %q", a, b, c)
	}
	if v4 := host(&net.TCPAddr{IP: net.ParseIP("192.0.2.1"), Port: 22}); v4 != "192.0.2.1" {
		t.Errorf("IPv4: %q", v4)
	}
}
