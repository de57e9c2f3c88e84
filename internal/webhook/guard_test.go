package webhook_test

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"bokat/internal/webhook"
	"bokat/internal/webhook/webhooktest"
)

// resolver is the name table of the guard tests: DNS itself is never asked.
func resolver() *webhooktest.Resolver {
	return webhooktest.NewResolver(
		"hooks.partner.se=93.184.216.34",
		"v6.partner.se=2a00:1450:4010:c0e::64",
		"nat64.partner.se=64:ff9b::5db8:d822",
		"mixed.partner.se=93.184.216.34,10.0.0.5",
		"loopback.partner.se=127.0.0.1",
		"private.partner.se=192.168.10.20",
		"ula.partner.se=fd12:3456:789a::1",
		"cgnat.partner.se=100.100.1.1",
		"metadata.partner.se=169.254.169.254",
		"mapped.partner.se=::ffff:10.1.2.3",
		"nat64-private.partner.se=64:ff9b::a01:203",
		"empty.partner.se=",
	)
}

func TestCheckURLRejectsEveryNonPublicDestination(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, url, reason string
	}{
		{"plain http", "http://hooks.partner.se/bokat", "must use https"},
		{"other scheme", "ftp://hooks.partner.se/bokat", "must use https"},
		{"other port", "https://hooks.partner.se:8443/bokat", "port 443"},
		{"port 80 on https", "https://hooks.partner.se:80/bokat", "port 443"},
		{"user information", "https://user:secret@hooks.partner.se/bokat", "user information"},
		{"user without password", "https://user@hooks.partner.se/bokat", "user information"},
		{"fragment", "https://hooks.partner.se/bokat#x", "fragment"},
		{"relative", "/bokat", "must use https"},
		{"too long", "https://hooks.partner.se/" + strings.Repeat("a", 2100), "longer than"},
		{"localhost", "https://localhost/bokat", "internal name (.localhost)"},
		{"localhost with trailing dot", "https://LOCALHOST./bokat", "internal name (.localhost)"},
		{"subdomain of localhost", "https://api.localhost/bokat", "internal name (.localhost)"},
		{"mDNS .local", "https://printer.local/bokat", "internal name (.local)"},
		{".internal", "https://db.corp.internal/bokat", "internal name (.internal)"},
		{"home.arpa", "https://nas.home.arpa/bokat", "internal name (.home.arpa)"},
		{"single label", "https://intranet-hooks/bokat", "single-label"},
		{"short numeric IPv4", "https://127.1/bokat", "numeric host"},
		{"hex IPv4", "https://0x7f000001/bokat", "numeric host"},
		{"non-ASCII name", "https://bokningar.exämpel.se/bokat", "xn--"},
		{"IPv4 loopback", "https://127.0.0.1/bokat", "loopback"},
		{"IPv4 loopback elsewhere in 127/8", "https://127.8.9.10/bokat", "loopback"},
		{"RFC 1918 10/8", "https://10.1.2.3/bokat", "private"},
		{"RFC 1918 172.16/12", "https://172.16.5.4/bokat", "private"},
		{"RFC 1918 192.168/16", "https://192.168.1.1/bokat", "private"},
		{"unspecified IPv4", "https://0.0.0.0/bokat", "unspecified"},
		{"link-local (cloud metadata)", "https://169.254.169.254/latest", "link-local"},
		{"CGNAT", "https://100.64.0.1/bokat", "carrier-grade NAT"},
		{"benchmarking", "https://198.18.0.1/bokat", "benchmarking"},
		{"documentation 192.0.2", "https://192.0.2.1/bokat", "documentation"},
		{"documentation 198.51.100", "https://198.51.100.7/bokat", "documentation"},
		{"documentation 203.0.113", "https://203.0.113.9/bokat", "documentation"},
		{"multicast IPv4", "https://224.0.0.1/bokat", "multicast"},
		{"broadcast", "https://255.255.255.255/bokat", "broadcast"},
		{"reserved 240/4", "https://240.0.0.1/bokat", "reserved"},
		{"IPv6 loopback", "https://[::1]/bokat", "loopback"},
		{"IPv6 unspecified", "https://[::]/bokat", "unspecified"},
		{"IPv6 unique local", "https://[fd00::1]/bokat", "unique local"},
		{"IPv6 link-local", "https://[fe80::1]/bokat", "link-local"},
		{"IPv6 link-local with zone", "https://[fe80::1%25eth0]/bokat", "zone"},
		{"IPv6 multicast", "https://[ff02::1]/bokat", "multicast"},
		{"IPv6 documentation", "https://[2001:db8::1]/bokat", "documentation"},
		{"IPv4-mapped loopback", "https://[::ffff:127.0.0.1]/bokat", "IPv4-mapped form of a loopback"},
		{"IPv4-mapped private", "https://[::ffff:10.0.0.1]/bokat", "IPv4-mapped form of a private"},
		{"NAT64 of private", "https://[64:ff9b::a00:1]/bokat", "NAT64 form of a private"},
		{"NAT64 of loopback", "https://[64:ff9b::7f00:1]/bokat", "NAT64 form of a loopback"},
		{"6to4 of private", "https://[2002:a00:1::1]/bokat", "6to4 form of a private"},
		{"IPv4-compatible", "https://[::7f00:1]/bokat", "not a global unicast"},
		{"Teredo", "https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/bokat", "IETF protocol"},
		{"name resolving to loopback", "https://loopback.partner.se/bokat", "resolves to 127.0.0.1, a loopback"},
		{"name resolving to private", "https://private.partner.se/bokat", "resolves to 192.168.10.20, a private"},
		{"name resolving to unique local", "https://ula.partner.se/bokat", "unique local"},
		{"name resolving to CGNAT", "https://cgnat.partner.se/bokat", "carrier-grade NAT"},
		{"name resolving to metadata", "https://metadata.partner.se/bokat", "link-local"},
		{"name resolving to mapped private", "https://mapped.partner.se/bokat", "IPv4-mapped form of a private"},
		{"name resolving to NAT64 of private", "https://nat64-private.partner.se/bokat", "NAT64 form of a private"},
		{"one private address among public", "https://mixed.partner.se/bokat", "resolves to 10.0.0.5"},
		{"name that does not resolve", "https://nx.partner.se/bokat", "could not be resolved"},
		{"name with no address", "https://empty.partner.se/bokat", "resolves to no address"},
	}
	g := webhook.NewGuard(resolver(), false)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := g.CheckURL(context.Background(), tc.url)
			var rej *webhook.RejectedError
			if !errors.As(err, &rej) {
				t.Fatalf("CheckURL(%q) = %v, want a rejection", tc.url, err)
			}
			if !strings.Contains(rej.Reason, tc.reason) {
				t.Fatalf("reason = %q, want it to mention %q", rej.Reason, tc.reason)
			}
		})
	}
}

func TestCheckURLAdmitsPublicHTTPS(t *testing.T) {
	t.Parallel()
	g := webhook.NewGuard(resolver(), false)
	for _, u := range []string{
		"https://hooks.partner.se/bokat",
		"https://hooks.partner.se:443/bokat?tenant=7",
		"https://HOOKS.partner.se./bokat",
		"https://v6.partner.se/bokat",
		"https://nat64.partner.se/bokat",
		"https://93.184.216.34/bokat",
		"https://[2a00:1450:4010:c0e::64]/bokat",
		"https://[64:ff9b::5db8:d822]/bokat",
	} {
		if _, err := g.CheckURL(context.Background(), u); err != nil {
			t.Errorf("CheckURL(%q) = %v, want it admitted", u, err)
		}
	}
}

func TestAllowPrivateAdmitsLocalTargets(t *testing.T) {
	t.Parallel()
	g := webhook.NewGuard(webhooktest.NewResolver("localhost=127.0.0.1,::1"), true)
	for _, u := range []string{"http://127.0.0.1:9000/hook", "http://localhost:9000/hook", "https://[::1]:8443/hook", "http://10.0.0.5/hook"} {
		if _, err := g.CheckURL(context.Background(), u); err != nil {
			t.Errorf("CheckURL(%q) with AllowPrivate = %v, want it admitted", u, err)
		}
	}
	// What is never a destination stays refused.
	for _, u := range []string{"ftp://127.0.0.1/hook", "http://u:p@127.0.0.1/hook", "http://nowhere.partner.se/hook"} {
		if _, err := g.CheckURL(context.Background(), u); err == nil {
			t.Errorf("CheckURL(%q) with AllowPrivate admitted it", u)
		}
	}
}

func TestAddrProblem(t *testing.T) {
	t.Parallel()
	public := []string{"93.184.216.34", "8.8.8.8", "1.1.1.1", "100.63.255.255", "100.128.0.0", "172.32.0.1", "198.20.0.1",
		"2a00:1450:4010:c0e::64", "2606:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1"}
	for _, a := range public {
		if why := webhook.AddrProblem(netip.MustParseAddr(a)); why != "" {
			t.Errorf("AddrProblem(%s) = %q, want public", a, why)
		}
	}
	blocked := []string{"0.1.2.3", "10.255.255.255", "100.64.0.0", "100.127.255.255", "127.0.0.1", "169.254.0.1", "172.31.255.255",
		"192.0.0.8", "192.0.2.255", "192.88.99.1", "192.168.0.1", "198.18.0.0", "198.19.255.255", "198.51.100.1", "203.0.113.1",
		"224.0.0.251", "239.255.255.250", "240.0.0.1", "255.255.255.255",
		"::", "::1", "::ffff:127.0.0.1", "::ffff:169.254.169.254", "64:ff9b::c0a8:101", "64:ff9b:1::1", "100::1", "2001:db8::1",
		"3fff::1", "fc00::1", "fdff::1", "fe80::1", "fec0::1", "ff02::1", "2002:7f00:1::", "1000::1"}
	for _, a := range blocked {
		if why := webhook.AddrProblem(netip.MustParseAddr(a)); why == "" {
			t.Errorf("AddrProblem(%s) = \"\", want it refused", a)
		}
	}
}
