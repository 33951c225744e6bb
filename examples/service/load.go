package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"
)

// sendLoad GETs url perSecond times a second, one request after the other,
// until ctx ends, reading and closing each answer: traffic of the service's
// own, so that its metrics move with nobody calling it. A request slower
// than the interval delays the next.
func sendLoad(ctx context.Context, url string, perSecond float64) {
	transport := &http.Transport{}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport}
	tick := time.NewTicker(time.Duration(float64(time.Second) / perSecond))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return // a URL run built: it cannot be wrong
		}
		resp, err := client.Do(req)
		if err != nil {
			continue // the service is stopping, or the request was canceled
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}
}

// dialable returns an address to reach a listener at addr from this host:
// addr itself, or, for a listener on every interface (":8080"), the same
// port on 127.0.0.1.
func dialable(addr net.Addr) string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return addr.String()
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(tcp.Port))
}
