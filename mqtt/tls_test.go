package mqtt

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/mqtt/broker"
	"github.com/hearth-dcop/hearth/mva/protocol/dpop"
	"github.com/hearth-dcop/hearth/mva/sim"
)

// selfSigned writes a certificate for 127.0.0.1 and its key as PEM files.
func selfSigned(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "hearth test broker"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// TestTLS runs DPOP through an embedded broker that speaks TLS only,
// started by RunGroup from certificate files, the clients trusting its
// certificate through LoadTLS.
func TestTLS(t *testing.T) {
	certFile, keyFile := selfSigned(t)
	clientTLS, err := LoadTLS(certFile, "", "")
	if err != nil {
		t.Fatal(err)
	}
	p := randomProblem(7, 3)
	want := simTruth(t, p, nil)
	cfg := GroupConfig{
		Config: Config{
			Broker: Broker{TLS: clientTLS}, Protocol: "dpop", Timing: fastTiming, Logger: testLogger(t),
		},
		Embedded: broker.Config{CertFile: certFile, KeyFile: keyFile},
	}
	got, gr, err := solveGroup(testContext(t), p, sim.Options{Protocol: dpop.New, Solver: dfbnb, Seed: 1}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(gr.Broker, "ssl://127.0.0.1:") {
		t.Fatalf("broker %s", gr.Broker)
	}
	checkSameAnswer(t, got, gr, want)

	// A client that does not trust the certificate cannot connect.
	b := startBroker(t, broker.Config{CertFile: certFile, KeyFile: keyFile})
	if _, err := rawClient(b.URL(), "x", "", "", ""); err == nil {
		t.Fatal("connected without trusting the broker's certificate")
	}
}

func TestLoadTLSErrors(t *testing.T) {
	certFile, keyFile := selfSigned(t)
	for name, args := range map[string][3]string{
		"missing CA":       {filepath.Join(t.TempDir(), "none.pem"), "", ""},
		"CA not PEM":       {keyFile + ".nope", "", ""},
		"cert without key": {"", certFile, ""},
		"key as CA":        {keyFile, "", ""},
	} {
		if _, err := LoadTLS(args[0], args[1], args[2]); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := LoadTLS(certFile, certFile, keyFile); err != nil {
		t.Fatal(err)
	}
}
