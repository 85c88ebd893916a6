package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"time"

	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	apiservertesting "k8s.io/kubernetes/cmd/kube-apiserver/app/testing"
)

// auditPolicy logs every request (user, verb, URI, response code), not bodies.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
`

// cluster owns the API server instance (restartable) and the stable loopback port in front of it.
type cluster struct {
	out, work string
	etcd      *embeddedEtcd
	creds     *credentials
	flags     []string

	mu       sync.Mutex
	server_  *apiservertesting.TestServer
	tb       *daemonTB
	proxy    *proxy
	restarts int
}

func newCluster(out, work string, etcd *embeddedEtcd, creds *credentials) (*cluster, error) {
	policy := filepath.Join(out, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o644); err != nil {
		return nil, err
	}
	flags := []string{
		"--authorization-mode=Node,RBAC",
		"--token-auth-file=" + creds.tokenFile,
		"--tls-cert-file=" + creds.certFile,
		"--tls-private-key-file=" + creds.keyFile,
		"--audit-policy-file=" + policy,
		"--audit-log-path=" + filepath.Join(out, "audit.log"),
		"--audit-log-format=json",
		// Synchronous writes: the tests read the log right after kdiagnose exits.
		"--audit-log-mode=blocking",
	}
	p, err := newProxy()
	if err != nil {
		return nil, err
	}
	return &cluster{out: out, work: work, etcd: etcd, creds: creds, flags: flags, proxy: p}, nil
}

// server is the URL clients use: a fixed loopback port that forwards bytes (TLS untouched) to the
// current API server instance, so a restarted server keeps its address.
func (c *cluster) server() string { return fmt.Sprintf("https://127.0.0.1:%d", c.proxy.port) }

func (c *cluster) start() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.server_ != nil {
		return fmt.Errorf("already running")
	}
	storage := storagebackend.NewDefaultConfig("/registry", nil)
	storage.Transport.ServerList = []string{c.etcd.clientURL}
	opts := apiservertesting.NewDefaultTestServerOptions()
	// The tests authenticate with bearer tokens; the front-proxy client CA is not needed.
	opts.EnableCertAuth = false
	// v1.37 scrapes metrics at tear-down to check invariants of integration tests; v1.36 has no such
	// field. Set it when present so one source builds against both releases.
	if f := reflect.ValueOf(opts).Elem().FieldByName("DisableInvariantChecks"); f.IsValid() {
		f.SetBool(true)
	}
	tb := newDaemonTB(fmt.Sprintf("kube-apiserver-%d", c.restarts), c.work)
	srv, err := apiservertesting.StartTestServer(tb, opts, c.flags, storage)
	if err != nil {
		tb.runCleanups()
		return err
	}
	c.server_, c.tb = &srv, tb
	c.restarts++
	addr := fmt.Sprintf("127.0.0.1:%d", srv.ServerOpts.SecureServing.BindPort)
	return c.proxy.open(addr)
}

func (c *cluster) stopAPIServer() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.proxy.close()
	if c.server_ != nil {
		c.server_.TearDownFn()
		c.tb.runCleanups()
		c.server_, c.tb = nil, nil
	}
}

func (c *cluster) stop() { c.stopAPIServer() }

// compact compacts etcd at its current revision: continue tokens issued before now are too old.
func (c *cluster) compact(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.server_ == nil {
		return fmt.Errorf("the API server is stopped")
	}
	cli := c.server_.EtcdClient
	// A write first, outside the API server's prefix: a token issued at the current revision stays valid
	// after a compaction at that same revision.
	resp, err := cli.Put(ctx, "/kdiagnose-e2e/compaction-marker", time.Now().String())
	if err != nil {
		return err
	}
	_, err = cli.Compact(ctx, resp.Header.Revision)
	return err
}

func (c *cluster) restConfig(tok, userAgent string) *rest.Config {
	return &rest.Config{
		Host:            c.server(),
		BearerToken:     tok,
		TLSClientConfig: rest.TLSClientConfig{CAData: c.creds.caData},
		UserAgent:       userAgent,
		QPS:             500,
		Burst:           1000,
	}
}

func (c *cluster) client(tok, userAgent string) (*loader, error) {
	cfg := c.restConfig(tok, userAgent)
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return newLoader(cfg, dyn)
}

// proxy forwards TCP connections from a fixed loopback port to the current API server; closed while the
// API server is down, so clients see a refused connection as they would from a stopped server.
type proxy struct {
	port int

	mu      sync.Mutex
	backend string
	ln      net.Listener
	conns   map[net.Conn]struct{}
}

func newProxy() (*proxy, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	return &proxy{port: port, conns: map[net.Conn]struct{}{}}, nil
}

func (p *proxy) open(backend string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p.port))
	if err != nil {
		return err
	}
	p.backend, p.ln = backend, ln
	go p.accept(ln, backend)
	return nil
}

func (p *proxy) accept(ln net.Listener, backend string) {
	for {
		in, err := ln.Accept()
		if err != nil {
			return
		}
		go p.forward(in, backend)
	}
}

func (p *proxy) track(conn net.Conn, add bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if add {
		p.conns[conn] = struct{}{}
	} else {
		delete(p.conns, conn)
	}
}

func (p *proxy) forward(in net.Conn, backend string) {
	defer in.Close()
	out, err := net.Dial("tcp", backend)
	if err != nil {
		return
	}
	defer out.Close()
	p.track(in, true)
	p.track(out, true)
	defer p.track(in, false)
	defer p.track(out, false)
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(out, in); done <- struct{}{} }()
	go func() { _, _ = io.Copy(in, out); done <- struct{}{} }()
	<-done
}

func (p *proxy) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for conn := range p.conns {
		conn.Close()
	}
}
