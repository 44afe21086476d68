// Package ovn is the provider's door to the OVN databases: one connection
// per database endpoint set, shared by every controller and following the
// Raft leader. Observing a row is a select the server answers (a few a
// poll per resource): no copy of the database is kept, so a provider
// serving thousands of clouds holds little per cloud (Database says why
// not libovsdb's client). Models come from libovsdb's modelgen (nbdb,
// sbdb; `make generate`).
package ovn

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-logr/logr"

	"github.com/c5c3/consumer-plane/provider/internal/clients/cache"
	"github.com/c5c3/consumer-plane/provider/internal/clients/ovn/nbdb"
	"github.com/c5c3/consumer-plane/provider/internal/clients/ovn/sbdb"
	"github.com/c5c3/consumer-plane/provider/internal/terminal"
)

// Config is what an OVN ProviderConfig and its Secret resolve to.
type Config struct {
	// Northbound and Southbound endpoints (ovsdb form); Southbound may be empty.
	Northbound, Southbound []string
	// LeaderOnly talks to a clustered database's leader only.
	LeaderOnly bool
	// CA, Cert and Key are PEM for ssl: endpoints.
	CA, Cert, Key []byte
}

func (c Config) key() string {
	h := sha256.New()
	for _, s := range []string{strings.Join(c.Northbound, ","), strings.Join(c.Southbound, ","),
		fmt.Sprint(c.LeaderOnly), string(c.CA), string(c.Cert), string(c.Key)} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Conn is a Northbound and, when configured, a Southbound database.
// Each connects on first use and again after it broke (to the new leader
// of a cluster).
type Conn struct {
	NB *Database
	// SB is nil when the ProviderConfig names no Southbound database.
	SB *Database
}

// Close disconnects both databases.
func (c *Conn) Close() {
	c.NB.Close()
	if c.SB != nil {
		c.SB.Close()
	}
}

// dialTimeout bounds a connect: the first in Dial, and each later one a
// call makes after the connection broke.
const dialTimeout = 10 * time.Second

// Dial connects to the databases of cfg.
func Dial(ctx context.Context, cfg Config, log logr.Logger) (*Conn, error) {
	var tlsCfg *tls.Config
	if len(cfg.Cert) > 0 || len(cfg.CA) > 0 {
		var err error
		if tlsCfg, err = tlsConfig(cfg); err != nil {
			return nil, terminal.Wrap(err)
		}
	}
	nbm, err := nbdb.FullDatabaseModel()
	if err != nil {
		return nil, err
	}
	nb, err := OpenDatabase(ctx, nbdb.Schema().Name, nbm, cfg.Northbound, cfg.LeaderOnly, tlsCfg, log.WithValues("database", "OVN_Northbound"))
	if err != nil {
		return nil, fmt.Errorf("cannot connect to the OVN Northbound database at %s: %w", strings.Join(cfg.Northbound, ","), err)
	}
	conn := &Conn{NB: nb}
	if len(cfg.Southbound) > 0 {
		sbm, err := sbdb.FullDatabaseModel()
		if err != nil {
			nb.Close()
			return nil, err
		}
		conn.SB, err = OpenDatabase(ctx, sbdb.Schema().Name, sbm, cfg.Southbound, cfg.LeaderOnly, tlsCfg, log.WithValues("database", "OVN_Southbound"))
		if err != nil {
			nb.Close()
			return nil, fmt.Errorf("cannot connect to the OVN Southbound database at %s: %w", strings.Join(cfg.Southbound, ","), err)
		}
	}
	return conn, nil
}

func tlsConfig(cfg Config) (*tls.Config, error) {
	t := &tls.Config{MinVersion: tls.VersionTLS12}
	if len(cfg.CA) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(cfg.CA) {
			return nil, errors.New("ca.crt of the TLS Secret holds no PEM certificate")
		}
		t.RootCAs = pool
	}
	if len(cfg.Cert) > 0 {
		pair, err := tls.X509KeyPair(cfg.Cert, cfg.Key)
		if err != nil {
			return nil, fmt.Errorf("tls.crt and tls.key of the TLS Secret are not a key pair: %w", err)
		}
		t.Certificates = []tls.Certificate{pair}
	}
	return t, nil
}

// A Cache holds one Conn per configuration, shared by every controller.
// A connection unused for the idle time is closed.
type Cache struct {
	log   logr.Logger
	conns *cache.Cache[*Conn]
}

// NewCache returns a Cache that closes connections idle for idle.
func NewCache(log logr.Logger, idle time.Duration) *Cache {
	return &Cache{log: log, conns: cache.New(0, idle, (*Conn).Close)}
}

// Conn returns the connection of cfg, dialing it once.
func (c *Cache) Conn(ctx context.Context, cfg Config) (*Conn, error) {
	return c.conns.Get(cfg.key(), func() (*Conn, error) { return Dial(ctx, cfg, c.log) })
}
