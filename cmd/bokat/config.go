package main

import (
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"bokat/internal/auth"
	"bokat/internal/sqlstore"
)

// Environments.
const (
	envDevelopment = "development"
	envProduction  = "production"
)

// commonConfig is shared by every command that touches the store.
type commonConfig struct {
	Database string
	Env      string
	// TokenPepper keys the hashes of partner and OAuth tokens (base64, at
	// least 32 bytes). Required in production; generated and kept in the
	// database in development.
	TokenPepper string
	LogLevel    string
}

// flagSet wraps flag.FlagSet with BOKAT_* environment twins. A setting is
// read from the command line, else from its environment variable, else it
// keeps its default; either way its text goes through the same parse
// function, and a text that does not parse stops the program with a usage
// error naming the flag or the variable it came from. Those errors come
// from the settings' own checks, which never repeat a secret value (the
// flag package's message would repeat any value).
type flagSet struct {
	*flag.FlagSet
	getenv func(string) string
	// envOf maps a flag to its environment variable, in registration order.
	envOf   map[string]string
	order   []string
	fromEnv map[string]bool
	// inEnv is true while environment values are being applied.
	inEnv bool
	// errs are the parse errors of values, reported once parsing is done.
	errs []error
}

func newFlagSet(name string, e env) *flagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	return &flagSet{FlagSet: fs, getenv: e.getenv, fromEnv: map[string]bool{}, envOf: map[string]string{}}
}

// setting is a flag.Value whose text parse turns into the setting. A text
// that does not parse is recorded as the flag set's error (labelled with its
// source) rather than returned to the flag package, whose message would
// repeat the value, secret or not.
type setting struct {
	fs    *flagSet
	name  string
	text  string
	parse func(string) error
}

func (v *setting) String() string {
	if v == nil {
		return ""
	}
	return v.text
}

func (v *setting) Set(s string) error {
	if err := v.parse(s); err != nil {
		v.fs.errs = append(v.fs.errs, fmt.Errorf("%s: %w", v.fs.label(v.name), err))
		return nil
	}
	v.text = s
	return nil
}

// boolSetting is a setting given as a bare flag (--demo).
type boolSetting struct{ setting }

func (v *boolSetting) IsBoolFlag() bool { return true }

func (v *boolSetting) String() string {
	if v == nil || v.text == "" {
		return "false"
	}
	return v.text
}

// define registers a setting and its environment variable ("" for none).
func (fs *flagSet) define(v flag.Value, name, envName, usage string) {
	if envName != "" {
		fs.envOf[name] = envName
		fs.order = append(fs.order, name)
	}
	fs.Var(v, name, withEnv(usage, envName))
}

// Text registers a string setting accepted only when check returns nil for
// it (check may be nil). Errors of check must not repeat a value that may
// be secret (keys, URLs with passwords).
func (fs *flagSet) Text(p *string, name, envName, def, usage string, check func(string) error) {
	*p = def
	fs.define(&setting{fs: fs, name: name, text: def, parse: func(s string) error {
		if check != nil {
			if err := check(s); err != nil {
				return err
			}
		}
		*p = s
		return nil
	}}, name, envName, usage)
}

// String registers a free-text setting.
func (fs *flagSet) String(p *string, name, envName, def, usage string) {
	fs.Text(p, name, envName, def, usage, nil)
}

// Bool registers a boolean setting: true, false, 1, 0 (and the other forms
// of strconv.ParseBool).
func (fs *flagSet) Bool(p *bool, name, envName string, def bool, usage string) {
	*p = def
	fs.define(&boolSetting{setting{fs: fs, name: name, text: strconv.FormatBool(def), parse: func(s string) error {
		b, err := strconv.ParseBool(s)
		if err != nil {
			return errors.New("must be true or false")
		}
		*p = b
		return nil
	}}}, name, envName, usage)
}

// Duration registers a duration setting ("90s", "15m").
func (fs *flagSet) Duration(p *time.Duration, name, envName string, def time.Duration, usage string) {
	fs.DurationIn(p, name, envName, def, 0, 0, usage)
}

// DurationIn registers a duration setting between least and most (no bound
// when both are zero).
func (fs *flagSet) DurationIn(p *time.Duration, name, envName string, def, least, most time.Duration, usage string) {
	*p = def
	fs.define(&setting{fs: fs, name: name, text: def.String(), parse: func(s string) error {
		d, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("%q is not a duration (write it like 90s, 15m or 1h)", s)
		}
		if (least != 0 || most != 0) && (d < least || d > most) {
			return fmt.Errorf("must be between %s and %s, got %s", least, most, d)
		}
		*p = d
		return nil
	}}, name, envName, usage)
}

func withEnv(usage, envName string) string {
	if envName == "" {
		return usage
	}
	return usage + " [$" + envName + "]"
}

// label names where a setting's value came from: its environment variable
// or its flag.
func (fs *flagSet) label(name string) string {
	if fs.inEnv || fs.fromEnv[name] {
		return "environment variable " + fs.envOf[name]
	}
	return "--" + name
}

// isSet reports whether the named setting was given by flag or environment.
func (fs *flagSet) isSet(name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}

// parse parses args, allowing flags after positional arguments, then reads
// the environment twin of every setting the command line did not give. It
// returns the first value that did not parse.
func (fs *flagSet) parse(args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
	onCommandLine := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { onCommandLine[f.Name] = true })
	fs.inEnv = true
	for _, name := range fs.order {
		v := fs.getenv(fs.envOf[name])
		if v == "" || onCommandLine[name] {
			continue
		}
		if err := fs.Set(name, v); err != nil {
			fs.errs = append(fs.errs, fmt.Errorf("%s: %w", fs.label(name), err))
		}
		fs.fromEnv[name] = true
	}
	fs.inEnv = false
	if len(fs.errs) > 0 {
		return nil, fs.errs[0]
	}
	return positional, nil
}

func (c *commonConfig) register(fs *flagSet) {
	fs.Text(&c.Database, "database", "BOKAT_DATABASE_URL", "sqlite:bokat-data/bokat.db", "database URL: sqlite:PATH or postgres://...", checkDatabaseURL)
	fs.Text(&c.Env, "env", "BOKAT_ENV", envDevelopment, "environment: development or production", oneOf(envDevelopment, envProduction))
	fs.Text(&c.TokenPepper, "token-pepper", "BOKAT_TOKEN_PEPPER", "", "base64 key (>= 32 bytes) for hashing tokens; required in production", checkTokenPepper)
	fs.Text(&c.LogLevel, "log-level", "BOKAT_LOG_LEVEL", "info", "log level: debug, info, warn, error", func(s string) error {
		var l slog.Level
		if l.UnmarshalText([]byte(s)) != nil {
			return fmt.Errorf("%q is not a log level (debug, info, warn or error)", s)
		}
		return nil
	})
}

func (c *commonConfig) validate() error {
	if c.Env == envProduction && c.TokenPepper == "" {
		return fmt.Errorf("production requires BOKAT_TOKEN_PEPPER (--token-pepper): a base64 key of at least 32 bytes; secrets are never generated in production")
	}
	return nil
}

// oneOf returns a check accepting exactly the given words.
func oneOf(words ...string) func(string) error {
	return func(s string) error {
		if slices.Contains(words, s) {
			return nil
		}
		return fmt.Errorf("must be %s, got %q", strings.Join(words, " or "), s)
	}
}

// checkDatabaseURL accepts what sqlstore.Open can open (its error redacts
// a password).
func checkDatabaseURL(s string) error {
	_, _, err := sqlstore.ParseURL(s)
	return err
}

// checkTokenPepper accepts a base64 key of at least auth.MinPepperBytes
// bytes, or nothing (development generates one).
func checkTokenPepper(s string) error {
	if s == "" {
		return nil
	}
	key, err := decodeKey("the token pepper", s)
	if err != nil {
		return err
	}
	if len(key) < auth.MinPepperBytes {
		return fmt.Errorf("the token pepper must be at least %d bytes, got %d", auth.MinPepperBytes, len(key))
	}
	return nil
}

func (c *commonConfig) production() bool { return c.Env == envProduction }

func decodeKey(name, v string) ([]byte, error) {
	v = strings.TrimSpace(v)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(v); err == nil {
			return b, nil
		}
	}
	return nil, fmt.Errorf("%s must be base64", name)
}

func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("%w: --log-level: %v", errUsage, err)
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l})), nil
}
