package webtest

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// Client is a plain HTTP client of the pages for tests, with cookies of
// its own, that does not follow redirects.
type Client struct {
	tb     testing.TB
	base   string
	signIn string
	http   *http.Client
	// Header is sent with every request.
	Header http.Header
}

// Response is a page as the client received it.
type Response struct {
	Status   int
	Location string
	Body     string
	Header   http.Header
}

// NewClient returns a client of the pages served at base whose sign-in
// page is at signInPath (such as /provider/sign-in): Post takes its form
// token from there.
func NewClient(tb testing.TB, base, signInPath string) *Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		tb.Fatal(err)
	}
	return &Client{tb: tb, base: base, signIn: signInPath, Header: http.Header{}, http: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// For returns a client for the test tb with the cookies of c (signed in as
// c is) and headers of its own.
func (c *Client) For(tb testing.TB) *Client {
	return &Client{tb: tb, base: c.base, signIn: c.signIn, http: c.http, Header: http.Header{}}
}

// Cookies are the cookies the client sends to the path.
func (c *Client) Cookies(path string) []*http.Cookie {
	c.tb.Helper()
	u, err := url.Parse(c.base + path)
	if err != nil {
		c.tb.Fatal(err)
	}
	return c.http.Jar.Cookies(u)
}

// Do sends the request, with the form (nil: none) as its body.
func (c *Client) Do(method, path string, form url.Values) Response {
	c.tb.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, c.base+path, body)
	if err != nil {
		c.tb.Fatal(err)
	}
	for k, v := range c.Header {
		req.Header[k] = v
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.tb.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return Response{Status: resp.StatusCode, Location: resp.Header.Get("Location"), Body: string(raw), Header: resp.Header}
}

// Get gets the page.
func (c *Client) Get(path string) Response { return c.Do("GET", path, nil) }

// Post sends the form with the client's own form token, read from the
// sign-in page, unless the form has one.
func (c *Client) Post(path string, form url.Values) Response {
	c.tb.Helper()
	if form == nil {
		form = url.Values{}
	}
	if form.Get("csrf_token") == "" {
		form.Set("csrf_token", c.Get(c.signIn).CSRF(c.tb))
	}
	return c.Do("POST", path, form)
}

// SignIn signs the client in with the code codes kept for the address.
func (c *Client) SignIn(codes *Codes, email string) {
	c.tb.Helper()
	if p := c.Post(c.signIn, url.Values{"email": {email}}); p.Status != http.StatusSeeOther || p.Location != c.signIn+"/code" {
		c.tb.Fatalf("send code: %d %s", p.Status, p.Location)
	}
	p := c.Post(c.signIn+"/code", url.Values{"code": {codes.Last(c.tb, email)}})
	if home := strings.TrimSuffix(c.signIn, "sign-in"); p.Status != http.StatusSeeOther || p.Location != home {
		c.tb.Fatalf("enter code: %d %s\n%s", p.Status, p.Location, p.Body)
	}
}

var csrfRe = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// CSRF is the page's form token; it fails the test when the page has none.
func (r Response) CSRF(tb testing.TB) string {
	tb.Helper()
	m := csrfRe.FindStringSubmatch(r.Body)
	if m == nil {
		tb.Fatalf("the page has no form token:\n%s", r.Body)
	}
	return m[1]
}
