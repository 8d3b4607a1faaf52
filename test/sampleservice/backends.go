/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kgo"
	"google.golang.org/grpc"
	grpccreds "google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// rootCAs are the system's roots (the image's CA bundle) plus the CA file, when given:
// the platform's CA signs its own backing services, an external one is signed by a
// public CA, and one pool verifies both.
func rootCAs(caFile string) (*x509.CertPool, error) {
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if caFile == "" {
		return pool, nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s: no PEM certificate", caFile)
	}
	return pool, nil
}

// clientTLS is the TLS configuration of a client of a backing service. ServerName is
// left empty: each client library sets it to the host it dials, so the name is checked.
func clientTLS(caFile string) (*tls.Config, error) {
	pool, err := rootCAs(caFile)
	if err != nil {
		return nil, err
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}

// NewBackends connects (lazily: every client library here dials on first use) to each
// backing service c configures.
func NewBackends(c Config) ([]Backend, error) {
	var out []Backend
	var errs []error
	if c.Postgres != nil {
		b, err := newPostgres(c.Component, *c.Postgres)
		errs = append(errs, err)
		if b != nil {
			out = append(out, b)
		}
	}
	if c.Redis != nil {
		b, err := newRedis(c.Component, *c.Redis, c.TLSCA)
		errs = append(errs, err)
		if b != nil {
			out = append(out, b)
		}
	}
	if c.Minio != nil {
		b, err := newMinio(c.Component, *c.Minio, c.TLSCA)
		errs = append(errs, err)
		if b != nil {
			out = append(out, b)
		}
	}
	if c.Kafka != nil {
		b, err := newKafka(c.Component, *c.Kafka)
		errs = append(errs, err)
		if b != nil {
			out = append(out, b)
		}
	}
	return out, errors.Join(errs...)
}

// postgresURL is the connection string of host: libpq's URL form, which pgx parses as
// libpq does (sslmode, sslrootcert).
func postgresURL(c PostgresConfig, host string) string {
	q := url.Values{}
	q.Set("sslmode", c.SSLMode)
	if c.SSLRootCert != "" {
		q.Set("sslrootcert", c.SSLRootCert)
	}
	q.Set("connect_timeout", "5")
	q.Set("application_name", "onto-sample-service")
	u := url.URL{
		Scheme: "postgres", User: url.UserPassword(c.User, c.Password),
		Host: net.JoinHostPort(host, strconv.Itoa(c.Port)), Path: "/" + c.Database, RawQuery: q.Encode(),
	}
	return u.String()
}

type postgresBackend struct {
	component   string
	write, read *pgxpool.Pool
	once        sync.Mutex
	tableReady  bool
}

func newPostgres(component string, c PostgresConfig) (*postgresBackend, error) {
	pool := func(host string) (*pgxpool.Pool, error) {
		cfg, err := pgxpool.ParseConfig(postgresURL(c, host))
		if err != nil {
			return nil, fmt.Errorf("postgres %s: %w", host, err)
		}
		cfg.MaxConns = 4
		return pgxpool.NewWithConfig(context.Background(), cfg)
	}
	b := &postgresBackend{component: component}
	var err error
	if b.write, err = pool(c.Host); err != nil {
		return nil, err
	}
	b.read = b.write
	if c.ReadHost != "" {
		if b.read, err = pool(c.ReadHost); err != nil {
			b.write.Close()
			return nil, err
		}
	}
	return b, nil
}

func (b *postgresBackend) Name() string { return "postgres" }

func (b *postgresBackend) Ping(ctx context.Context) error {
	if err := b.write.Ping(ctx); err != nil {
		return err
	}
	if b.read != b.write {
		if err := b.read.Ping(ctx); err != nil {
			return fmt.Errorf("read host: %w", err)
		}
	}
	return nil
}

// Work counts this component's requests in a table on the primary and reads the count
// back from the read host (a standby, when replicated: it may lag by a request).
func (b *postgresBackend) Work(ctx context.Context) error {
	if err := b.ensureTable(ctx); err != nil {
		return err
	}
	var n int64
	if err := b.write.QueryRow(ctx, `INSERT INTO onto_sample_work (component, n) VALUES ($1, 1)
		ON CONFLICT (component) DO UPDATE SET n = onto_sample_work.n + 1 RETURNING n`, b.component).Scan(&n); err != nil {
		return fmt.Errorf("insert: %w", err)
	}
	var read int64
	if err := b.read.QueryRow(ctx, `SELECT n FROM onto_sample_work WHERE component = $1`, b.component).Scan(&read); err != nil {
		return fmt.Errorf("select: %w", err)
	}
	return nil
}

func (b *postgresBackend) ensureTable(ctx context.Context) error {
	b.once.Lock()
	defer b.once.Unlock()
	if b.tableReady {
		return nil
	}
	_, err := b.write.Exec(ctx, `CREATE TABLE IF NOT EXISTS onto_sample_work (component text PRIMARY KEY, n bigint NOT NULL)`)
	var pgErr *pgconn.PgError
	// Another pod creating it at the same moment: unique_violation on the catalog, or
	// duplicate_table.
	if errors.As(err, &pgErr) && (pgErr.Code == "23505" || pgErr.Code == "42P07") {
		err = nil
	}
	if err != nil {
		return fmt.Errorf("create table: %w", err)
	}
	b.tableReady = true
	return nil
}

func (b *postgresBackend) Close() {
	if b.read != b.write {
		b.read.Close()
	}
	b.write.Close()
}

type redisBackend struct {
	component string
	client    redis.UniversalClient
}

func newRedis(component string, c RedisConfig, caFile string) (*redisBackend, error) {
	var tlsCfg *tls.Config
	if c.TLS {
		var err error
		if tlsCfg, err = clientTLS(caFile); err != nil {
			return nil, fmt.Errorf("redis: %w", err)
		}
	}
	b := &redisBackend{component: component}
	if c.Mode == "sentinel" {
		// One password for redis and the sentinels (the render gives them the same);
		// TLS to both.
		b.client = redis.NewFailoverClient(&redis.FailoverOptions{
			MasterName: c.SentinelMaster, SentinelAddrs: []string{c.SentinelAddr},
			Password: c.Password, SentinelPassword: c.Password, TLSConfig: tlsCfg,
			DialTimeout: 5 * time.Second,
		})
	} else {
		b.client = redis.NewClient(&redis.Options{Addr: c.Addr, Password: c.Password, TLSConfig: tlsCfg, DialTimeout: 5 * time.Second})
	}
	return b, nil
}

func (b *redisBackend) Name() string                   { return "redis" }
func (b *redisBackend) Ping(ctx context.Context) error { return b.client.Ping(ctx).Err() }
func (b *redisBackend) Work(ctx context.Context) error {
	return b.client.Incr(ctx, "onto:sample:work:"+b.component).Err()
}
func (b *redisBackend) Close() { _ = b.client.Close() }

type minioBackend struct {
	client *minio.Client
	bucket string
	mu     sync.Mutex
	made   bool
}

func newMinio(component string, c MinioConfig, caFile string) (*minioBackend, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if c.Secure {
		cfg, err := clientTLS(caFile)
		if err != nil {
			return nil, fmt.Errorf("minio: %w", err)
		}
		tr.TLSClientConfig = cfg
	}
	client, err := minio.New(c.Endpoint, &minio.Options{
		Creds: credentials.NewStaticV4(c.AccessKey, c.SecretKey, ""), Secure: c.Secure, Transport: tr,
	})
	if err != nil {
		return nil, fmt.Errorf("minio: %w", err)
	}
	return &minioBackend{client: client, bucket: "onto-" + component}, nil
}

func (b *minioBackend) Name() string { return "minio" }

// Ping lists the buckets: an authenticated request that needs no bucket to exist.
func (b *minioBackend) Ping(ctx context.Context) error {
	_, err := b.client.ListBuckets(ctx)
	return err
}

// Work puts an object into the component's bucket (made on first use) and reads it back.
func (b *minioBackend) Work(ctx context.Context) error {
	if err := b.ensureBucket(ctx); err != nil {
		return err
	}
	body := []byte(time.Now().UTC().Format(time.RFC3339Nano))
	if _, err := b.client.PutObject(ctx, b.bucket, "work", bytes.NewReader(body), int64(len(body)), minio.PutObjectOptions{ContentType: "text/plain"}); err != nil {
		return fmt.Errorf("put: %w", err)
	}
	obj, err := b.client.GetObject(ctx, b.bucket, "work", minio.GetObjectOptions{})
	if err != nil {
		return fmt.Errorf("get: %w", err)
	}
	defer obj.Close()
	if _, err := io.Copy(io.Discard, obj); err != nil {
		return fmt.Errorf("get: %w", err)
	}
	return nil
}

func (b *minioBackend) ensureBucket(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.made {
		return nil
	}
	ok, err := b.client.BucketExists(ctx, b.bucket)
	if err != nil {
		return fmt.Errorf("bucket %s: %w", b.bucket, err)
	}
	if !ok {
		if err := b.client.MakeBucket(ctx, b.bucket, minio.MakeBucketOptions{}); err != nil {
			var resp minio.ErrorResponse
			if !errors.As(err, &resp) || (resp.Code != "BucketAlreadyOwnedByYou" && resp.Code != "BucketAlreadyExists") {
				return fmt.Errorf("make bucket %s: %w", b.bucket, err)
			}
		}
	}
	b.made = true
	return nil
}

func (b *minioBackend) Close() {}

type kafkaBackend struct {
	client *kgo.Client
}

// KafkaTopic is where the service produces one record per request; the broker creates
// it on first use (auto.create.topics.enable, Kafka's default).
const KafkaTopic = "onto-sample-work"

func newKafka(component string, c KafkaConfig) (*kafkaBackend, error) {
	opts := []kgo.Opt{
		kgo.SeedBrokers(c.Brokers...), kgo.ClientID("onto-sample-service-" + component),
		kgo.DefaultProduceTopic(KafkaTopic), kgo.AllowAutoTopicCreation(),
		kgo.DialTimeout(5 * time.Second), kgo.RecordDeliveryTimeout(10 * time.Second),
	}
	if c.Protocol == "SSL" {
		cfg, err := clientTLS(c.CAFile)
		if err != nil {
			return nil, fmt.Errorf("kafka: %w", err)
		}
		opts = append(opts, kgo.DialTLSConfig(cfg))
	}
	client, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("kafka: %w", err)
	}
	return &kafkaBackend{client: client}, nil
}

func (b *kafkaBackend) Name() string                   { return "kafka" }
func (b *kafkaBackend) Ping(ctx context.Context) error { return b.client.Ping(ctx) }
func (b *kafkaBackend) Work(ctx context.Context) error {
	return b.client.ProduceSync(ctx, &kgo.Record{Value: []byte(time.Now().UTC().Format(time.RFC3339Nano))}).FirstErr()
}
func (b *kafkaBackend) Close() { b.client.Close() }

// upstream is one of the gateway's upstream services, asked over gRPC health.
type upstream struct {
	name string
	conn *grpc.ClientConn
}

func newUpstreams(c Config) ([]*upstream, error) {
	creds := insecure.NewCredentials()
	if c.TLSEnabled {
		cfg, err := clientTLS(c.TLSCA)
		if err != nil {
			return nil, fmt.Errorf("upstreams: %w", err)
		}
		creds = grpccreds.NewTLS(cfg)
	}
	var out []*upstream
	for _, name := range c.UpstreamNames() {
		conn, err := grpc.NewClient(c.Upstreams[name], grpc.WithTransportCredentials(creds))
		if err != nil {
			return nil, fmt.Errorf("upstream %s: %w", name, err)
		}
		out = append(out, &upstream{name: name, conn: conn})
	}
	return out, nil
}

func (u *upstream) check(ctx context.Context) error {
	resp, err := healthpb.NewHealthClient(u.conn).Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		return err
	}
	if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		return fmt.Errorf("status %s", resp.GetStatus())
	}
	return nil
}
