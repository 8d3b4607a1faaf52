/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sort"
	"strconv"
	"strings"
)

// Config is everything the service reads from its environment: what the render of a
// platform service gives it (pkg/render serviceConfig, serviceTLSEnv, externalEnv,
// credentialPatch) and the misbehaviour mode of the image (ONTO_SAMPLE_MODE).
type Config struct {
	Platform, Component, Version string `json:",omitempty"`
	PodName, PodNamespace        string `json:",omitempty"`

	LogLevel  slog.Level
	LogFormat string // json or text

	HTTPPort, GRPCPort, MetricsPort int
	MetricsEnabled                  bool

	// TLS of the service's own HTTP and gRPC ports, and the CA it trusts for the
	// platform's backing services and upstreams.
	TLSEnabled                     bool
	TLSCertFile, TLSKeyFile, TLSCA string `json:",omitempty"`

	Postgres *PostgresConfig `json:",omitempty"`
	Redis    *RedisConfig    `json:",omitempty"`
	Minio    *MinioConfig    `json:",omitempty"`
	Kafka    *KafkaConfig    `json:",omitempty"`
	// Upstreams are the gateway's: component name to host:port of its gRPC port.
	Upstreams map[string]string `json:",omitempty"`

	Tracing TracingConfig
	Mode    Mode
}

// PostgresConfig: POSTGRES_HOST, _PORT, _USER, _PASSWORD, _DB, POSTGRES_READ_HOST, and
// the TLS mode: POSTGRES_SSLMODE (an external server's), else libpq's PGSSLMODE and
// PGSSLROOTCERT (the platform's own, verify-full), else libpq's default, prefer.
type PostgresConfig struct {
	Host, ReadHost  string
	Port            int
	User, Database  string
	Password        string `json:"-"`
	SSLMode         string
	SSLRootCert     string `json:",omitempty"`
	PasswordPresent bool
}

// RedisConfig: REDIS_MODE standalone (REDIS_ADDR) or sentinel (REDIS_SENTINEL_ADDR,
// REDIS_SENTINEL_MASTER), REDIS_PASSWORD (for redis and the sentinels alike), REDIS_TLS.
type RedisConfig struct {
	Mode            string
	Addr            string `json:",omitempty"`
	SentinelAddr    string `json:",omitempty"`
	SentinelMaster  string `json:",omitempty"`
	Password        string `json:"-"`
	TLS             bool
	PasswordPresent bool
}

// MinioConfig: MINIO_ENDPOINT (host:port), MINIO_ACCESS_KEY, MINIO_SECRET_KEY, MINIO_SECURE.
type MinioConfig struct {
	Endpoint  string
	AccessKey string `json:"-"`
	SecretKey string `json:"-"`
	Secure    bool
}

// KafkaConfig: KAFKA_BOOTSTRAP_SERVERS (comma-separated), KAFKA_SECURITY_PROTOCOL
// (PLAINTEXT or SSL), KAFKA_SSL_CA_LOCATION.
type KafkaConfig struct {
	Brokers  []string
	Protocol string
	CAFile   string `json:",omitempty"`
}

// TracingConfig: OTEL_SDK_DISABLED and the OTel SDK's own variables, which the SDK
// reads itself (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_SERVICE_NAME, OTEL_TRACES_SAMPLER,
// OTEL_TRACES_SAMPLER_ARG, OTEL_RESOURCE_ATTRIBUTES); they are kept here to be logged
// and checked.
type TracingConfig struct {
	Enabled     bool
	Endpoint    string  `json:",omitempty"`
	ServiceName string  `json:",omitempty"`
	Sampler     string  `json:",omitempty"`
	Ratio       float64 `json:",omitempty"`
}

// ModeEnv names the variable of the misbehaviour mode; the image's config sets it per
// tag (sample-service:1.6.0-crash sets crash), a pod's env may override it.
const ModeEnv = "ONTO_SAMPLE_MODE"

// LoadConfig reads the configuration from getenv (os.Getenv in main). Every error is
// reported at once.
func LoadConfig(getenv func(string) string, environ []string) (Config, error) {
	var errs []error
	str := func(k, def string) string {
		if v := getenv(k); v != "" {
			return v
		}
		return def
	}
	boolean := func(k string, def bool) bool {
		v := getenv(k)
		if v == "" {
			return def
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: not a boolean", k, v))
			return def
		}
		return b
	}
	port := func(k string, def int) int {
		v := getenv(k)
		if v == "" {
			return def
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 65535 {
			errs = append(errs, fmt.Errorf("%s=%q: not a port", k, v))
			return def
		}
		return n
	}

	c := Config{
		Platform: getenv("ONTO_PLATFORM"), Component: str("ONTO_COMPONENT", "sample-service"), Version: getenv("ONTO_VERSION"),
		PodName: getenv("POD_NAME"), PodNamespace: getenv("POD_NAMESPACE"),
		LogFormat:      strings.ToLower(str("LOG_FORMAT", "json")),
		HTTPPort:       port("HTTP_PORT", 8080),
		GRPCPort:       port("GRPC_PORT", 9090),
		MetricsPort:    port("METRICS_PORT", 9091),
		MetricsEnabled: boolean("METRICS_ENABLED", true),
		TLSEnabled:     boolean("TLS_ENABLED", false),
		TLSCertFile:    getenv("TLS_CERT_FILE"),
		TLSKeyFile:     getenv("TLS_KEY_FILE"),
		TLSCA:          getenv("TLS_CA_FILE"),
	}
	if err := c.LogLevel.UnmarshalText([]byte(str("LOG_LEVEL", "INFO"))); err != nil {
		errs = append(errs, fmt.Errorf("LOG_LEVEL=%q: want DEBUG, INFO, WARN or ERROR", getenv("LOG_LEVEL")))
	}
	if c.LogFormat != "json" && c.LogFormat != "text" {
		errs = append(errs, fmt.Errorf("LOG_FORMAT=%q: want json or text", getenv("LOG_FORMAT")))
	}
	if c.TLSEnabled && (c.TLSCertFile == "" || c.TLSKeyFile == "") {
		errs = append(errs, errors.New("TLS_ENABLED=true needs TLS_CERT_FILE and TLS_KEY_FILE"))
	}

	if host := getenv("POSTGRES_HOST"); host != "" {
		pg := &PostgresConfig{
			Host: host, ReadHost: getenv("POSTGRES_READ_HOST"), Port: port("POSTGRES_PORT", 5432),
			User: str("POSTGRES_USER", "postgres"), Database: str("POSTGRES_DB", "postgres"),
			Password: getenv("POSTGRES_PASSWORD"),
			SSLMode:  str("POSTGRES_SSLMODE", str("PGSSLMODE", "prefer")), SSLRootCert: getenv("PGSSLROOTCERT"),
		}
		pg.PasswordPresent = pg.Password != ""
		switch pg.SSLMode {
		case "disable", "allow", "prefer", "require", "verify-ca", "verify-full":
		default:
			errs = append(errs, fmt.Errorf("postgres sslmode %q: want one of libpq's", pg.SSLMode))
		}
		c.Postgres = pg
	}

	switch mode := getenv("REDIS_MODE"); {
	case mode == "sentinel" || (mode == "" && getenv("REDIS_SENTINEL_ADDR") != ""):
		r := &RedisConfig{Mode: "sentinel", SentinelAddr: getenv("REDIS_SENTINEL_ADDR"), SentinelMaster: str("REDIS_SENTINEL_MASTER", "onto"),
			Password: getenv("REDIS_PASSWORD"), TLS: boolean("REDIS_TLS", false)}
		if r.SentinelAddr == "" {
			errs = append(errs, errors.New("REDIS_MODE=sentinel needs REDIS_SENTINEL_ADDR"))
		}
		r.PasswordPresent = r.Password != ""
		c.Redis = r
	case mode == "standalone" || (mode == "" && getenv("REDIS_ADDR") != ""):
		r := &RedisConfig{Mode: "standalone", Addr: getenv("REDIS_ADDR"), Password: getenv("REDIS_PASSWORD"), TLS: boolean("REDIS_TLS", false)}
		if r.Addr == "" {
			errs = append(errs, errors.New("REDIS_MODE=standalone needs REDIS_ADDR"))
		}
		r.PasswordPresent = r.Password != ""
		c.Redis = r
	case mode != "":
		errs = append(errs, fmt.Errorf("REDIS_MODE=%q: want standalone or sentinel", mode))
	}

	if ep := getenv("MINIO_ENDPOINT"); ep != "" {
		if _, _, err := net.SplitHostPort(ep); err != nil {
			errs = append(errs, fmt.Errorf("MINIO_ENDPOINT=%q: want host:port", ep))
		}
		c.Minio = &MinioConfig{Endpoint: ep, AccessKey: getenv("MINIO_ACCESS_KEY"), SecretKey: getenv("MINIO_SECRET_KEY"), Secure: boolean("MINIO_SECURE", false)}
	}

	if bs := getenv("KAFKA_BOOTSTRAP_SERVERS"); bs != "" {
		k := &KafkaConfig{Protocol: strings.ToUpper(str("KAFKA_SECURITY_PROTOCOL", "PLAINTEXT")), CAFile: getenv("KAFKA_SSL_CA_LOCATION")}
		for _, b := range strings.Split(bs, ",") {
			if b = strings.TrimSpace(b); b != "" {
				k.Brokers = append(k.Brokers, b)
			}
		}
		if k.Protocol != "PLAINTEXT" && k.Protocol != "SSL" {
			errs = append(errs, fmt.Errorf("KAFKA_SECURITY_PROTOCOL=%q: want PLAINTEXT or SSL (SASL is not rendered)", k.Protocol))
		}
		c.Kafka = k
	}

	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		if name, ok := strings.CutPrefix(k, "UPSTREAM_"); ok && v != "" {
			if c.Upstreams == nil {
				c.Upstreams = map[string]string{}
			}
			c.Upstreams[strings.ToLower(strings.ReplaceAll(name, "_", "-"))] = v
		}
	}

	c.Tracing = TracingConfig{
		Enabled:     !boolean("OTEL_SDK_DISABLED", false) && getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "",
		Endpoint:    getenv("OTEL_EXPORTER_OTLP_ENDPOINT"),
		ServiceName: str("OTEL_SERVICE_NAME", c.Component),
		Sampler:     str("OTEL_TRACES_SAMPLER", "parentbased_always_on"),
	}
	if c.Tracing.Enabled {
		c.Tracing.Ratio = 1
		if arg := getenv("OTEL_TRACES_SAMPLER_ARG"); arg != "" && strings.HasSuffix(c.Tracing.Sampler, "traceidratio") {
			r, err := strconv.ParseFloat(arg, 64)
			if err != nil || r < 0 || r > 1 {
				errs = append(errs, fmt.Errorf("OTEL_TRACES_SAMPLER_ARG=%q: want a ratio in [0, 1]", arg))
			} else {
				c.Tracing.Ratio = r
			}
		}
	}

	mode, err := ParseMode(getenv(ModeEnv))
	if err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", ModeEnv, err))
	}
	c.Mode = mode
	return c, errors.Join(errs...)
}

// Backends lists the backing services configured, in the catalog's order.
func (c Config) Backends() []string {
	var out []string
	if c.Postgres != nil {
		out = append(out, "postgres")
	}
	if c.Redis != nil {
		out = append(out, "redis")
	}
	if c.Minio != nil {
		out = append(out, "minio")
	}
	if c.Kafka != nil {
		out = append(out, "kafka")
	}
	return out
}

// UpstreamNames are the gateway's upstreams, sorted.
func (c Config) UpstreamNames() []string {
	out := make([]string, 0, len(c.Upstreams))
	for k := range c.Upstreams {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
