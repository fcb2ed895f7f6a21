package emulator

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"
)

// ErrNotLoopback is the error (wrapped) of Serve and ServeWith for an
// address other machines could reach, unless ServeOptions.AllowRemote is
// set. The emulator has no authentication: whoever reaches it can read and
// change every workbook it serves (and, with persistence, the file).
var ErrNotLoopback = errors.New("not a loopback address")

// ServeOptions tune ServeWith.
type ServeOptions struct {
	// AllowRemote lets the address be one other machines can reach: a
	// wildcard (":8089", "0.0.0.0:8089", "[::]:8089"), another interface's
	// IP, or a host name that resolves to one.
	AllowRemote bool
	// LookupHost resolves a host name of the address; nil means
	// net.DefaultResolver.LookupHost. Tests replace it.
	LookupHost func(ctx context.Context, host string) ([]string, error)
}

// Server is an emulator listening on a TCP address (see ServeWith).
type Server struct {
	// URL is the base URL a client on this machine uses
	// ("http://127.0.0.1:8089"); point the client at URL+"/". For a
	// wildcard listen it is the loopback one: see AllInterfaces.
	URL string
	// Addr is the address actually bound ("0.0.0.0:8089",
	// "127.0.0.1:41234").
	Addr string
	// AllInterfaces is set when it listens on every interface (the address
	// had no host, or 0.0.0.0 or ::): URL is then only one of the addresses
	// it answers on.
	AllInterfaces bool
	// Loopback is set when only this machine can reach it.
	Loopback bool

	stop func() error
}

// Stop shuts the server down (waiting up to 5s for requests in flight).
// It is safe to call more than once.
func (s *Server) Stop() error { return s.stop() }

// Serve listens on addr ("" = "127.0.0.1:0", a free port) and serves e
// until stop is called or ctx ends; url is "http://HOST:PORT", a loopback
// address. It refuses (ErrNotLoopback) an address other machines could
// reach: use ServeWith to allow one.
func Serve(ctx context.Context, addr string, e *Emulator) (url string, stop func() error, err error) {
	s, err := ServeWith(ctx, addr, e, ServeOptions{})
	if err != nil {
		return "", nil, err
	}
	return s.URL, s.Stop, nil
}

// ServeWith is Serve with options. Unless opts.AllowRemote is set, the
// address must be loopback only, decided before anything listens (see
// LoopbackListenAddr) and checked again on the bound socket.
func ServeWith(ctx context.Context, addr string, e *Emulator, opts ServeOptions) (*Server, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	listen := addr
	if !opts.AllowRemote {
		var err error
		if listen, err = LoopbackListenAddr(ctx, addr, opts.LookupHost); err != nil {
			return nil, err
		}
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, err
	}
	tcp := ln.Addr().(*net.TCPAddr)
	if !opts.AllowRemote && !tcp.IP.IsLoopback() {
		ln.Close()
		return nil, fmt.Errorf("listen on %s: %w: bound %s", addr, ErrNotLoopback, tcp)
	}
	srv := &http.Server{Handler: e, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	stop := sync.OnceValue(func() error {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err := srv.Shutdown(sctx)
		if errors.Is(err, context.DeadlineExceeded) {
			return srv.Close()
		}
		return err
	})
	unhook := context.AfterFunc(ctx, func() { stop() })
	s := &Server{
		Addr:          tcp.String(),
		AllInterfaces: tcp.IP.IsUnspecified(),
		Loopback:      tcp.IP.IsLoopback(),
	}
	host := tcp.IP.String()
	if s.AllInterfaces {
		host = "127.0.0.1"
	}
	s.URL = "http://" + net.JoinHostPort(host, strconv.Itoa(tcp.Port))
	s.stop = func() error {
		unhook()
		return stop()
	}
	return s, nil
}

// LoopbackListenAddr is the rule that keeps the emulator on this machine:
// it returns the address to listen on for addr ("host:port") if that
// serves this machine only, else an error wrapping ErrNotLoopback. A
// loopback IP (127.0.0.0/8, ::1) is kept; a host name must resolve (lookup,
// nil = the system resolver) to loopback addresses only, and the first
// one, IPv4 first, is returned so that what was checked is what is bound.
// No host (":8089"), a wildcard (0.0.0.0, ::) and any other address are
// refused. Nothing listens here.
func LoopbackListenAddr(ctx context.Context, addr string, lookup func(ctx context.Context, host string) ([]string, error)) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", err
	}
	if host == "" {
		return "", fmt.Errorf("%s: %w: no host means every interface", addr, ErrNotLoopback)
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		ip = ip.Unmap()
		switch {
		case ip.IsUnspecified():
			return "", fmt.Errorf("%s: %w: %s means every interface", addr, ErrNotLoopback, host)
		case !ip.IsLoopback():
			return "", fmt.Errorf("%s: %w", addr, ErrNotLoopback)
		}
		return addr, nil
	}
	if lookup == nil {
		lookup = net.DefaultResolver.LookupHost
	}
	ips, err := lookup(ctx, host)
	if err != nil {
		return "", fmt.Errorf("%s: resolving %s: %w", addr, host, err)
	}
	if len(ips) == 0 {
		return "", fmt.Errorf("%s: %s resolves to no address", addr, host)
	}
	pick := ""
	for _, s := range ips {
		ip, err := netip.ParseAddr(s)
		if err != nil {
			return "", fmt.Errorf("%s: %s resolves to %q, not an IP address", addr, host, s)
		}
		ip = ip.Unmap()
		if !ip.IsLoopback() {
			return "", fmt.Errorf("%s: %w: %s resolves to %s", addr, ErrNotLoopback, host, s)
		}
		if pick == "" || (ip.Is4() && !mustParse(pick).Is4()) {
			pick = ip.WithZone("").String()
		}
	}
	return net.JoinHostPort(pick, port), nil
}

func mustParse(s string) netip.Addr {
	ip, _ := netip.ParseAddr(s)
	return ip
}
