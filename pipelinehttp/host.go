package pipelinehttp

import (
	"net"
	"net/url"
	"strings"
)

// Host is the key of a transport's per-host state: a scheme, a host name and a
// port, as a request's URL names them. Requests to the same Host share one
// breaker, one retry budget and one latency estimator; requests to different
// Hosts share nothing.
//
// A Host is a comparable value, built from a URL by [HostOf] without
// allocating for the URLs requests usually carry (a lower-case host, with or
// without a port).
type Host struct {
	// Scheme is the URL's scheme, lower case: "http" or "https".
	Scheme string
	// Name is the host name or IP address, lower case, without brackets for an
	// IPv6 address.
	Name string
	// Port is the URL's port, or the scheme's default port when the URL has
	// none: "80" for http, "443" for https, "" for any other scheme.
	Port string
	// Route is the name a request's context gave it with [Route], or "" for
	// the host's shared state. Requests of a route share a breaker, budget
	// and estimator of their own.
	Route string
}

// HostOf returns the Host a request to u is keyed by: u's scheme and host in
// lower case, and its port or the scheme's default port. So
// "https://API.example.com/v1" and "https://api.example.com:443/v2" share a
// Host.
func HostOf(u *url.URL) Host {
	h := Host{Scheme: strings.ToLower(u.Scheme), Name: strings.ToLower(u.Hostname()), Port: u.Port()}
	if h.Port == "" {
		switch h.Scheme {
		case "http":
			h.Port = "80"
		case "https":
			h.Port = "443"
		}
	}
	return h
}

// String returns the host as a URL's origin: "https://api.example.com:443",
// with an IPv6 address in brackets; the port is left out only if it is empty.
// A route follows as a fragment would: "https://api.example.com:443#reports".
func (h Host) String() string {
	var origin string
	switch {
	case h.Port != "":
		origin = h.Scheme + "://" + net.JoinHostPort(h.Name, h.Port)
	case strings.Contains(h.Name, ":"):
		origin = h.Scheme + "://[" + h.Name + "]"
	default:
		origin = h.Scheme + "://" + h.Name
	}
	if h.Route != "" {
		return origin + "#" + h.Route
	}
	return origin
}
