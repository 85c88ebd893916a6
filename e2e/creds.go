package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/cert"
)

// The identities in the static token file (--token-auth-file). The kubeconfig has one context per test
// user (admin, viewer, developer); the scheduler has its own kubeconfig with its real bootstrap identity.
const (
	adminUser     = "e2e-admin"
	viewerUser    = "e2e-viewer"
	developerUser = "e2e-developer"
	schedulerUser = "system:kube-scheduler"
)

type credentials struct {
	admin, viewer, developer, scheduler string // bearer tokens
	tokenFile                           string
	certFile, keyFile                   string
	caData                              []byte
}

func token() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// writeCredentials writes the token file and a serving certificate for 127.0.0.1 that every API server
// instance of this run uses (so a restarted server is still trusted by the same kubeconfig).
func writeCredentials(out string) (*credentials, error) {
	c := &credentials{admin: token(), viewer: token(), developer: token(), scheduler: token()}
	c.tokenFile = filepath.Join(out, "tokens.csv")
	lines := fmt.Sprintf("%s,%s,uid-admin,\"system:masters\"\n%s,%s,uid-viewer\n%s,%s,uid-developer\n%s,%s,uid-scheduler\n",
		c.admin, adminUser, c.viewer, viewerUser, c.developer, developerUser, c.scheduler, schedulerUser)
	if err := os.WriteFile(c.tokenFile, []byte(lines), 0o600); err != nil {
		return nil, err
	}
	certPEM, keyPEM, err := cert.GenerateSelfSignedCertKey("127.0.0.1", []net.IP{net.ParseIP("127.0.0.1")}, []string{"localhost"})
	if err != nil {
		return nil, err
	}
	c.certFile = filepath.Join(out, "apiserver.crt")
	c.keyFile = filepath.Join(out, "apiserver.key")
	if err := os.WriteFile(c.certFile, certPEM, 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(c.keyFile, keyPEM, 0o600); err != nil {
		return nil, err
	}
	c.caData = certPEM
	return c, nil
}

func kubeconfig(server string, caData []byte, users map[string]string, namespaces map[string]string, current string) *clientcmdapi.Config {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["e2e"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caData}
	for name, tok := range users {
		cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: tok}
		cfg.Contexts[name] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: name, Namespace: namespaces[name]}
	}
	cfg.CurrentContext = current
	return cfg
}

func writeKubeconfigs(out, server string, c *credentials, devNamespace string) error {
	users := map[string]string{"admin": c.admin, "viewer": c.viewer, "developer": c.developer}
	ns := map[string]string{"developer": devNamespace}
	if err := clientcmd.WriteToFile(*kubeconfig(server, c.caData, users, ns, "admin"), filepath.Join(out, "kubeconfig")); err != nil {
		return err
	}
	sched := map[string]string{"scheduler": c.scheduler}
	return clientcmd.WriteToFile(*kubeconfig(server, c.caData, sched, nil, "scheduler"), filepath.Join(out, "scheduler.kubeconfig"))
}
