package doctor

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"sitebox/internal/config"
	"sitebox/internal/tlsutil"
)

// checkIdentity asks what answers on each configured port whether it is
// this box: an XRootD handshake on root://, the box's own certificate on
// https://, sitebox metrics on the metrics port. "Something listens" is
// not enough: after a failed start another program (an old xrootd, a web
// server) may hold the port, and clients would reach it instead.
func checkIdentity(ctx context.Context, cfg *config.Config, o *Options) []Check {
	var out []Check
	for _, l := range listeners(cfg, o.Hostname) {
		if _, port, _ := net.SplitHostPort(l.Local); port == "0" {
			continue
		}
		c := Check{Name: fmt.Sprintf("%s %s", l.Role, l.Local)}
		conn, err := dialTimeout(ctx, o, l.Local)
		if err != nil {
			c.Status, c.Summary = StatusSkip, "nothing listens (see Ports)"
			out = append(out, c)
			continue
		}
		var what string
		switch l.Role {
		case "root://":
			what = notXRootD(conn)
		case "https://":
			if cfg.HTTPS.PlainHTTP {
				what = notHTTP(conn, "/", "")
			} else {
				what = notThisCert(conn, cfg)
			}
		case "metrics":
			what = notHTTP(conn, "/metrics", "sitebox_")
		}
		conn.Close()
		switch {
		case what == "":
			c.Status, c.Summary = StatusOK, "this box answers"
		case strings.HasPrefix(what, "?"):
			c.Status, c.Summary = StatusWarn, what[1:]
		default:
			c.Status, c.Summary = StatusError, "another program holds the port: "+what
			c.Explain = "Clients sent to this port reach that program, not the box (which then could not bind it and is not serving there)."
			_, port, _ := net.SplitHostPort(l.Local)
			c.Fix = fmt.Sprintf("Find it with `ss -ltnp 'sport = :%s'`, stop it (or move the box to a free port in %s), then restart the box.", port, l.Key)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return []Check{{Name: "listeners", Status: StatusSkip, Summary: "no fixed port configured"}}
	}
	return out
}

func dialTimeout(ctx context.Context, o *Options, addr string) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	conn, err := o.Dial(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	conn.SetDeadline(time.Now().Add(o.Timeout))
	return conn, nil
}

// notXRootD sends XRootD's initial handshake; an XRootD server answers
// with an 8-byte kXR_ok body (protocol version and server type).
func notXRootD(conn net.Conn) string {
	hs := make([]byte, 20)
	binary.BigEndian.PutUint32(hs[12:], 4)
	binary.BigEndian.PutUint32(hs[16:], 2012)
	if _, err := conn.Write(hs); err != nil {
		return "it closed the connection at XRootD's handshake"
	}
	resp := make([]byte, 16)
	if _, err := io.ReadFull(conn, resp); err != nil {
		return "it does not answer XRootD's handshake (" + shortErr(err) + ")"
	}
	if binary.BigEndian.Uint16(resp[2:]) != 0 || binary.BigEndian.Uint32(resp[4:]) != 8 {
		return fmt.Sprintf("its answer to XRootD's handshake is not XRootD's (%x)", resp[:8])
	}
	return ""
}

// notThisCert completes a TLS handshake and compares the certificate
// with the one the box serves.
func notThisCert(conn net.Conn, cfg *config.Config) string {
	tc := tls.Client(conn, &tls.Config{InsecureSkipVerify: true})
	if err := tc.Handshake(); err != nil {
		return "it does not speak TLS (" + shortErr(err) + ")"
	}
	peer := tc.ConnectionState().PeerCertificates
	path, _ := servedCertFile(cfg)
	data, err := os.ReadFile(path)
	if err != nil {
		return "?it speaks TLS, but the box's certificate " + path + " cannot be read to compare: " + shortErr(err)
	}
	block, _ := pem.Decode(data)
	if block == nil || len(peer) == 0 {
		return "?it speaks TLS, but " + path + " holds no certificate to compare"
	}
	if !bytes.Equal(peer[0].Raw, block.Bytes) {
		return fmt.Sprintf("it serves the certificate of %q, not the box's (%s)", peer[0].Subject.CommonName, path)
	}
	return ""
}

// notHTTP asks for path over plain HTTP; want, if set, must be in the body.
func notHTTP(conn net.Conn, path, want string) string {
	fmt.Fprintf(conn, "GET %s HTTP/1.0\r\nHost: localhost\r\n\r\n", path)
	r := bufio.NewReader(io.LimitReader(conn, 4<<20))
	status, err := r.ReadString('\n')
	if err != nil || !strings.HasPrefix(status, "HTTP/") {
		return "it does not answer HTTP"
	}
	if want == "" {
		return ""
	}
	body, _ := io.ReadAll(r)
	if !bytes.Contains(body, []byte(want)) {
		return "it answers HTTP, but " + path + " has no sitebox metrics"
	}
	return ""
}

// servedCertFile is the certificate the box serves: [https] cert, else
// one the federation CA issued, else the generated self-signed one.
func servedCertFile(cfg *config.Config) (path string, generated bool) {
	if cfg.HTTPS.Cert != "" {
		return cfg.HTTPS.Cert, false
	}
	fed := filepath.Join(cfg.Server.StateDir, "tls", "federation-cert.pem")
	if _, err := os.Stat(fed); err == nil {
		return fed, false
	}
	return filepath.Join(cfg.Server.StateDir, "tls", tlsutil.CertName), true
}

func shortErr(err error) string {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "no answer"
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "it hung up"
	}
	return err.Error()
}
