package main

import (
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"
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

// flagSet wraps flag.FlagSet with BOKAT_* environment twins and remembers
// which settings were given explicitly (by flag or environment).
type flagSet struct {
	*flag.FlagSet
	getenv  func(string) string
	fromEnv map[string]bool
	envOf   map[string]string
}

func newFlagSet(name string, e env) *flagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	return &flagSet{FlagSet: fs, getenv: e.getenv, fromEnv: map[string]bool{}, envOf: map[string]string{}}
}

func (fs *flagSet) envDefault(name, envName string) (string, bool) {
	fs.envOf[name] = envName
	if envName == "" {
		return "", false
	}
	v := fs.getenv(envName)
	if v != "" {
		fs.fromEnv[name] = true
		return v, true
	}
	return "", false
}

func (fs *flagSet) String(p *string, name, envName, def, usage string) {
	if v, ok := fs.envDefault(name, envName); ok {
		def = v
	}
	fs.StringVar(p, name, def, withEnv(usage, envName))
}

func (fs *flagSet) Bool(p *bool, name, envName string, def bool, usage string) {
	if v, ok := fs.envDefault(name, envName); ok {
		b, err := strconv.ParseBool(v)
		if err == nil {
			def = b
		}
	}
	fs.BoolVar(p, name, def, withEnv(usage, envName))
}

func (fs *flagSet) Duration(p *time.Duration, name, envName string, def time.Duration, usage string) {
	if v, ok := fs.envDefault(name, envName); ok {
		if d, err := time.ParseDuration(v); err == nil {
			def = d
		}
	}
	fs.DurationVar(p, name, def, withEnv(usage, envName))
}

func withEnv(usage, envName string) string {
	if envName == "" {
		return usage
	}
	return usage + " [$" + envName + "]"
}

// isSet reports whether the named setting was given by flag or environment.
func (fs *flagSet) isSet(name string) bool {
	set := fs.fromEnv[name]
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}

// parse parses args, allowing flags after positional arguments.
func (fs *flagSet) parse(args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}

func (c *commonConfig) register(fs *flagSet) {
	fs.String(&c.Database, "database", "BOKAT_DATABASE_URL", "sqlite:bokat-data/bokat.db", "database URL: sqlite:PATH or postgres://...")
	fs.String(&c.Env, "env", "BOKAT_ENV", envDevelopment, "environment: development or production")
	fs.String(&c.TokenPepper, "token-pepper", "BOKAT_TOKEN_PEPPER", "", "base64 key (>= 32 bytes) for hashing tokens; required in production")
	fs.String(&c.LogLevel, "log-level", "BOKAT_LOG_LEVEL", "info", "log level: debug, info, warn, error")
}

func (c *commonConfig) validate() error {
	switch c.Env {
	case envDevelopment, envProduction:
	default:
		return fmt.Errorf("%w: --env must be development or production, got %q", errUsage, c.Env)
	}
	if c.Env == envProduction && c.TokenPepper == "" {
		return fmt.Errorf("production requires BOKAT_TOKEN_PEPPER (--token-pepper): a base64 key of at least 32 bytes; secrets are never generated in production")
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
