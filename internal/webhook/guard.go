package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Resolver resolves host names to addresses; *net.Resolver satisfies it.
// Tests inject a fixed table.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

var _ Resolver = (*net.Resolver)(nil)

// MaxURLLength bounds a webhook URL.
const MaxURLLength = 2048

// resolveTimeout bounds the name lookup of a registration.
const resolveTimeout = 5 * time.Second

// Guard decides which destinations webhooks may reach. In production a
// destination must be https on port 443 with a public host name whose every
// address is public; the same address check runs again on the socket address
// actually dialled (see DialContext), so a name that changes its answer after
// registration (DNS rebinding) is still refused. AllowPrivate (development
// only) admits http, any port and private or loopback addresses.
type Guard struct {
	resolver     Resolver
	allowPrivate bool
	// port is the only destination port allowed in production: 443.
	port uint16
}

// NewGuard returns a Guard resolving names with r.
func NewGuard(r Resolver, allowPrivate bool) *Guard {
	return &Guard{resolver: r, allowPrivate: allowPrivate, port: 443}
}

// RejectedError says why a destination is not allowed. Reason is written
// for the endpoint's owner and holds no secret.
type RejectedError struct {
	Reason string
	// Private is set when the development mode that admits private
	// destinations (AllowPrivate) would have admitted the URL: http, a
	// port other than 443, an internal name or a non-public address.
	Private bool
}

// AllowPrivateWouldAdmit reports Private: consumers that must not import
// this package (the HTTP layer) ask it through an interface.
func (e *RejectedError) AllowPrivateWouldAdmit() bool { return e.Private }

func (e *RejectedError) Error() string { return "webhook destination rejected: " + e.Reason }

func reject(format string, args ...any) error {
	return &RejectedError{Reason: fmt.Sprintf(format, args...)}
}

// rejectPrivate is reject for a URL AllowPrivate would admit.
func rejectPrivate(format string, args ...any) error {
	return &RejectedError{Reason: fmt.Sprintf(format, args...), Private: true}
}

// CheckURL parses a webhook URL and checks it for registration: scheme, port,
// user information, host name, and every address the name resolves to. It
// returns the parsed URL, or a *RejectedError, or the context's error.
func (g *Guard) CheckURL(ctx context.Context, raw string) (*url.URL, error) {
	if len(raw) > MaxURLLength {
		return nil, reject("the URL is longer than %d characters", MaxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, reject("the URL cannot be parsed")
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && g.allowPrivate:
	default:
		if u.Scheme == "http" {
			return nil, rejectPrivate("the URL must use https")
		}
		return nil, reject("the URL must use https")
	}
	if u.Opaque != "" || u.Host == "" {
		return nil, reject("the URL must be absolute: https://host/path")
	}
	if u.User != nil {
		return nil, reject("the URL must not carry user information (user:password@)")
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return nil, reject("the URL must not have a fragment (#...)")
	}
	if p := u.Port(); p != "" {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil || n == 0 {
			return nil, reject("the URL's port is not valid")
		}
		if !g.allowPrivate && uint16(n) != g.port {
			return nil, rejectPrivate("the URL must use port 443 (got %s)", p)
		}
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if host == "" {
		return nil, reject("the URL has no host")
	}

	if addr, err := netip.ParseAddr(host); err == nil {
		if why := g.addrProblem(addr); why != "" {
			return nil, rejectPrivate("%s is %s", addr, why)
		}
		return u, nil
	}
	if strings.HasPrefix(u.Host, "[") {
		return nil, reject("the URL's IPv6 address is not valid")
	}
	if !g.allowPrivate {
		if why := nameProblem(host); why != "" {
			return nil, rejectPrivate("%s %s", host, why)
		}
	}
	lctx, cancel := context.WithTimeout(ctx, resolveTimeout)
	defer cancel()
	addrs, err := g.resolver.LookupNetIP(lctx, "ip", host)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, reject("%s could not be resolved", host)
	}
	if len(addrs) == 0 {
		return nil, reject("%s resolves to no address", host)
	}
	for _, a := range addrs {
		if why := g.addrProblem(a); why != "" {
			return nil, rejectPrivate("%s resolves to %s, %s", host, a, why)
		}
	}
	return u, nil
}

// internalSuffixes are names that never denote a public destination: the
// special-use names of RFC 6761/6762/8375, the ICANN-reserved .internal, and
// suffixes that ICANN will not delegate because private networks use them.
var internalSuffixes = []string{
	"localhost", "local", "internal", "localdomain", "home.arpa", "arpa",
	"intranet", "lan", "home", "corp", "invalid", "test", "example",
}

// nameProblem returns why a host name can never be a public destination,
// or "".
func nameProblem(host string) string {
	if len(host) > 253 {
		return "is longer than 253 characters"
	}
	labels := strings.Split(host, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 {
			return "is not a valid host name"
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				if c >= 0x80 {
					return "must be written in its ASCII (xn--) form"
				}
				return "is not a valid host name"
			}
		}
	}
	for _, s := range internalSuffixes {
		if host == s || strings.HasSuffix(host, "."+s) {
			return fmt.Sprintf("is an internal name (.%s)", s)
		}
	}
	tld := labels[len(labels)-1]
	if strings.Trim(tld, "0123456789") == "" || strings.HasPrefix(tld, "0x") {
		return "is a numeric host that is not a valid IP address"
	}
	if len(labels) == 1 {
		return "is a single-label name, which only resolves inside a private network"
	}
	return ""
}

// addrProblem returns why the guard refuses an address, or "".
func (g *Guard) addrProblem(a netip.Addr) string {
	if g.allowPrivate {
		return ""
	}
	return AddrProblem(a)
}

type blockedRange struct {
	prefix netip.Prefix
	why    string
}

func ranges(pairs ...string) []blockedRange {
	out := make([]blockedRange, 0, len(pairs)/2)
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, blockedRange{netip.MustParsePrefix(pairs[i]), pairs[i+1]})
	}
	return out
}

const (
	whyPrivate = "a private address (RFC 1918)"
	whyDocs    = "a documentation address"
)

var blockedV4 = ranges(
	"0.0.0.0/8", `an unspecified ("this network") address`,
	"10.0.0.0/8", whyPrivate,
	"100.64.0.0/10", "a carrier-grade NAT address (100.64.0.0/10, RFC 6598)",
	"127.0.0.0/8", "a loopback address",
	"169.254.0.0/16", "a link-local address",
	"172.16.0.0/12", whyPrivate,
	"192.0.0.0/24", "an IETF protocol assignment (192.0.0.0/24)",
	"192.0.2.0/24", whyDocs+" (192.0.2.0/24)",
	"192.88.99.0/24", "a deprecated 6to4 relay address (192.88.99.0/24)",
	"192.168.0.0/16", whyPrivate,
	"198.18.0.0/15", "a benchmarking address (198.18.0.0/15)",
	"198.51.100.0/24", whyDocs+" (198.51.100.0/24)",
	"203.0.113.0/24", whyDocs+" (203.0.113.0/24)",
	"224.0.0.0/4", "a multicast address",
	"255.255.255.255/32", "the broadcast address",
	"240.0.0.0/4", "a reserved address (240.0.0.0/4)",
)

var blockedV6 = ranges(
	"::/128", "the unspecified address",
	"::1/128", "a loopback address",
	"64:ff9b:1::/48", "a local-use NAT64 address (RFC 8215)",
	"100::/64", "a discard-only address",
	"2001::/23", "an IETF protocol assignment (2001::/23, including Teredo and benchmarking)",
	"2001:db8::/32", whyDocs+" (2001:db8::/32)",
	"3fff::/20", whyDocs+" (3fff::/20)",
	"fc00::/7", "a unique local (private) address",
	"fe80::/10", "a link-local address",
	"fec0::/10", "a site-local address",
	"ff00::/8", "a multicast address",
)

var (
	nat64      = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour  = netip.MustParsePrefix("2002::/16")
	globalIPv6 = netip.MustParsePrefix("2000::/3")
)

// AddrProblem returns why an address is not a public unicast destination,
// or "" when it is. IPv4-mapped, NAT64 (64:ff9b::/96) and 6to4 addresses
// are judged by the IPv4 address they carry.
func AddrProblem(a netip.Addr) string {
	if !a.IsValid() {
		return "not a valid address"
	}
	if a.Zone() != "" {
		return "an address with a zone (link-local scope)"
	}
	if a.Is4In6() {
		if why := AddrProblem(a.Unmap()); why != "" {
			return "the IPv4-mapped form of " + why
		}
		return ""
	}
	if a.Is4() {
		for _, r := range blockedV4 {
			if r.prefix.Contains(a) {
				return r.why
			}
		}
		return ""
	}
	if nat64.Contains(a) {
		b := a.As16()
		if why := AddrProblem(netip.AddrFrom4([4]byte(b[12:16]))); why != "" {
			return "the NAT64 form of " + why
		}
		return ""
	}
	if sixToFour.Contains(a) {
		b := a.As16()
		if why := AddrProblem(netip.AddrFrom4([4]byte(b[2:6]))); why != "" {
			return "the 6to4 form of " + why
		}
		return ""
	}
	for _, r := range blockedV6 {
		if r.prefix.Contains(a) {
			return r.why
		}
	}
	if !globalIPv6.Contains(a) {
		return "not a global unicast address"
	}
	return ""
}

// DialRefusedError is the error of a connection the guard refused at dial
// time.
type DialRefusedError struct {
	Addr   netip.AddrPort
	Reason string
}

func (e *DialRefusedError) Error() string {
	return fmt.Sprintf("destination refused at connect: %s is %s", e.Addr, e.Reason)
}

// checkDial judges the socket address about to be connected.
func (g *Guard) checkDial(address string) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &DialRefusedError{Reason: "not an IP address and port"}
	}
	if g.allowPrivate {
		return nil
	}
	if ap.Port() != g.port {
		return &DialRefusedError{Addr: ap, Reason: "not port 443"}
	}
	if why := AddrProblem(ap.Addr()); why != "" {
		return &DialRefusedError{Addr: ap, Reason: why}
	}
	return nil
}

// control runs on every socket before it connects, with the address really
// dialled: the last word on where a delivery may go.
func (g *Guard) control(_ context.Context, _, address string, _ syscall.RawConn) error {
	return g.checkDial(address)
}

// DialContext connects to addr ("host:port") for an HTTP transport: it
// resolves the host with the guard's resolver and dials the addresses in
// turn through a net.Dialer whose ControlContext refuses any socket address
// the guard does not allow.
func (g *Guard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("bad port %q", portText)
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		addrs, err = g.resolver.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return nil, fmt.Errorf("resolve %s: %w", host, err)
		}
		if len(addrs) == 0 {
			return nil, fmt.Errorf("resolve %s: no address", host)
		}
	}
	d := &net.Dialer{Timeout: 5 * time.Second, ControlContext: g.control}
	var errs []error
	for _, a := range addrs {
		conn, err := d.DialContext(ctx, network, netip.AddrPortFrom(a.Unmap(), uint16(port)).String())
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}
