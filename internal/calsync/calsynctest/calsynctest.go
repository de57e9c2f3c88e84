// Package calsynctest generates providers' calendar feeds for benchmarks
// and load runs, and serves them over HTTP as calendar services do: with
// an ETag and Last-Modified, answering 304 to a matching If-None-Match.
package calsynctest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Events is how many VEVENTs a generated feed holds.
const Events = 200

// Feed returns feed number n as Google Calendar exports a working
// tradesperson's calendar around from: 200 events, of which 20 weekly
// recurring ones (half ended before from, each with two EXDATEs and, for
// some, a moved instance by RECURRENCE-ID), 16 all-day ones (some over
// several days, half marked free as calendar applications mark them), 24
// timed events marked free (TRANSP:TRANSPARENT), 6 cancelled ones, and 134
// single appointments spread from a year before from to 60 days after it.
// The same n, from and version give the same bytes; another version moves
// one appointment, as an edit in the calendar does.
func Feed(n int, from time.Time, version int) []byte {
	stockholm, err := time.LoadLocation("Europe/Stockholm")
	if err != nil {
		panic(err)
	}
	rng := rand.New(rand.NewPCG(uint64(n), 0x63616c))
	y, m, d := from.In(stockholm).Date()
	day0 := time.Date(y, m, d, 0, 0, 0, 0, stockholm)
	at := func(dayOffset, minutes int) time.Time {
		t := day0.AddDate(0, 0, dayOffset)
		return time.Date(t.Year(), t.Month(), t.Day(), minutes/60, minutes%60, 0, 0, stockholm)
	}
	local := func(t time.Time) string { return t.Format("20060102T150405") }
	date := func(t time.Time) string { return t.Format("20060102") }
	var b bytes.Buffer
	b.Grow(64 << 10)
	b.WriteString("BEGIN:VCALENDAR\r\nPRODID:-//Google Inc//Google Calendar 70.9054//EN\r\nVERSION:2.0\r\nCALSCALE:GREGORIAN\r\n" +
		"METHOD:PUBLISH\r\nX-WR-CALNAME:Jobb\r\nX-WR-TIMEZONE:Europe/Stockholm\r\n" +
		"BEGIN:VTIMEZONE\r\nTZID:Europe/Stockholm\r\nX-LIC-LOCATION:Europe/Stockholm\r\nBEGIN:DAYLIGHT\r\nTZOFFSETFROM:+0100\r\n" +
		"TZOFFSETTO:+0200\r\nTZNAME:CEST\r\nDTSTART:19700329T020000\r\nRRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU\r\nEND:DAYLIGHT\r\n" +
		"BEGIN:STANDARD\r\nTZOFFSETFROM:+0200\r\nTZOFFSETTO:+0100\r\nTZNAME:CET\r\nDTSTART:19701025T030000\r\n" +
		"RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU\r\nEND:STANDARD\r\nEND:VTIMEZONE\r\n")
	event := func(i int, props string) {
		fmt.Fprintf(&b, "BEGIN:VEVENT\r\n%sDTSTAMP:%s\r\nUID:gen%06d-%03d@google.com\r\nCREATED:20250901T100000Z\r\n"+
			"LAST-MODIFIED:20260101T100000Z\r\nSEQUENCE:0\r\nSUMMARY:Händelse %d\r\nEND:VEVENT\r\n", props, day0.UTC().Format("20060102T150405Z"), n, i, i)
	}
	timed := func(start time.Time, minutes int) string {
		return "DTSTART;TZID=Europe/Stockholm:" + local(start) + "\r\nDTEND;TZID=Europe/Stockholm:" + local(start.Add(time.Duration(minutes)*time.Minute)) + "\r\n"
	}
	days := []string{"MO", "TU", "WE", "TH", "FR"}
	i := 0
	for ; i < 20; i++ { // weekly, from up to 300 days ago
		wd := rng.IntN(5)
		startDay := -7 * (1 + rng.IntN(43))
		// Move startDay to the weekday wd.
		startDay += (wd + 1 - int(day0.AddDate(0, 0, startDay).Weekday()) + 7) % 7
		start := at(startDay, (7+rng.IntN(9))*60)
		props := timed(start, 60*(1+rng.IntN(2)))
		rule := "RRULE:FREQ=WEEKLY;BYDAY=" + days[wd]
		if i%2 == 1 { // ended
			rule += ";UNTIL=" + at(-rng.IntN(30), 0).UTC().Format("20060102T150405Z")
		}
		props += rule + "\r\n"
		for k := range 2 {
			ex := start.AddDate(0, 0, -startDay/7*7+7*(1+k+rng.IntN(3)))
			props += "EXDATE;TZID=Europe/Stockholm:" + local(ex) + "\r\n"
		}
		props += "STATUS:CONFIRMED\r\nTRANSP:OPAQUE\r\n"
		event(i, props)
		if i%4 == 0 { // one instance moved a day later
			inst := start.AddDate(0, 0, -startDay/7*7+14)
			fmt.Fprintf(&b, "BEGIN:VEVENT\r\n%sRECURRENCE-ID;TZID=Europe/Stockholm:%s\r\nDTSTAMP:%s\r\nUID:gen%06d-%03d@google.com\r\n"+
				"STATUS:CONFIRMED\r\nSUMMARY:Flyttad\r\nEND:VEVENT\r\n", timed(inst.AddDate(0, 0, 1), 60), local(inst),
				day0.UTC().Format("20060102T150405Z"), n, i)
		}
	}
	for ; i < 36; i++ { // all-day, some over several days
		start := at(rng.IntN(120)-60, 0)
		props := "DTSTART;VALUE=DATE:" + date(start) + "\r\nDTEND;VALUE=DATE:" + date(start.AddDate(0, 0, 1+rng.IntN(3)*rng.IntN(2))) + "\r\n"
		if i%2 == 0 {
			props += "TRANSP:TRANSPARENT\r\n"
		} else {
			props += "TRANSP:OPAQUE\r\n"
		}
		event(i, props+"STATUS:CONFIRMED\r\n")
	}
	for ; i < 60; i++ { // marked free
		event(i, timed(at(rng.IntN(120)-60, (7+rng.IntN(10))*60), 30*(1+rng.IntN(4)))+"STATUS:CONFIRMED\r\nTRANSP:TRANSPARENT\r\n")
	}
	for ; i < 66; i++ { // cancelled
		event(i, timed(at(rng.IntN(60), (7+rng.IntN(10))*60), 60)+"STATUS:CANCELLED\r\nTRANSP:OPAQUE\r\n")
	}
	for ; i < Events; i++ { // appointments, a year back to 60 days ahead
		offset := rng.IntN(425) - 365
		if i == Events-1 {
			offset = 1 + version%30 // the one an edit moves
		}
		event(i, timed(at(offset, (7+rng.IntN(10))*60+15*rng.IntN(4)), 30*(1+rng.IntN(6)))+"STATUS:CONFIRMED\r\nTRANSP:OPAQUE\r\n")
	}
	b.WriteString("END:VCALENDAR\r\n")
	return b.Bytes()
}

// Server serves generated feeds at /feeds/{id}.ics, where id ends in the
// feed's number (prv_gen_00042 is feed 42), generated around From. Each
// answer carries an ETag (of the feed's number and version) and a
// Last-Modified; a request with the current ETag gets 304. Safe for
// concurrent use.
type Server struct {
	From time.Time
	// noValidators makes it answer every request with the body and no
	// validators, as a server that does not support conditional requests.
	noValidators atomic.Bool
	mu           sync.Mutex
	versions     map[int]int
	extra        map[int]string
	served       map[int]time.Time
	// Counters of answers.
	OK, NotModified, Failed atomic.Int64
	Bytes                   atomic.Int64
}

// NewServer returns a Server of feeds around from.
func NewServer(from time.Time) *Server {
	return &Server{From: from, versions: map[int]int{}, extra: map[int]string{}, served: map[int]time.Time{}}
}

// SetValidators turns the ETag and Last-Modified on (the default) or off.
func (s *Server) SetValidators(on bool) { s.noValidators.Store(!on) }

// AddBusy changes feed n: it gets a busy event over [start, end), and a new
// version.
func (s *Server) AddBusy(n int, start, end time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.versions[n]++
	s.extra[n] += "BEGIN:VEVENT\r\nUID:added-" + strconv.Itoa(s.versions[n]) + "@google.com\r\nDTSTART:" +
		start.UTC().Format("20060102T150405Z") + "\r\nDTEND:" + end.UTC().Format("20060102T150405Z") + "\r\nSUMMARY:Ny kund\r\nEND:VEVENT\r\n"
	delete(s.served, n)
}

// ServedChanged returns when feed n was last served in its current version
// (its body, not a 304), and whether it was.
func (s *Server) ServedChanged(n int) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.served[n]
	return t, ok
}

// FeedNumber returns the number a provider id or feed path ends in.
func FeedNumber(id string) (int, error) {
	id = strings.TrimSuffix(id, ".ics")
	j := strings.LastIndexFunc(id, func(r rune) bool { return r < '0' || r > '9' })
	return strconv.Atoi(id[j+1:])
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name, ok := strings.CutPrefix(r.URL.Path, "/feeds/")
	n, err := FeedNumber(name)
	if !ok || err != nil || !strings.HasSuffix(name, ".ics") {
		s.Failed.Add(1)
		http.NotFound(w, r)
		return
	}
	s.mu.Lock()
	version, extra := s.versions[n], s.extra[n]
	s.mu.Unlock()
	etag := fmt.Sprintf(`"%d-%d"`, n, version)
	if !s.noValidators.Load() {
		w.Header().Set("ETag", etag)
		w.Header().Set("Last-Modified", s.From.UTC().Add(time.Duration(version)*time.Second).Format(http.TimeFormat))
		if r.Header.Get("If-None-Match") == etag {
			s.NotModified.Add(1)
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	body := Feed(n, s.From, version)
	if extra != "" {
		body = append(body[:len(body)-len("END:VCALENDAR\r\n")], extra+"END:VCALENDAR\r\n"...)
	}
	w.Header().Set("Content-Type", "text/calendar; charset=UTF-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	_, _ = w.Write(body)
	s.OK.Add(1)
	s.Bytes.Add(int64(len(body)))
	s.mu.Lock()
	if s.versions[n] == version {
		if _, ok := s.served[n]; !ok {
			s.served[n] = time.Now()
		}
	}
	s.mu.Unlock()
}
