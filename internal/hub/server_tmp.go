package hub

// Temporary stand-in of the embedded server until server.go lands.

import (
	"context"
	"errors"
	"net"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"
)

type TLS struct{ Cert, Key, CA string }
type User struct{ Name, Password string }
type Credentials struct{ User, Password, NKeySeedFile, CredsFile string }
type Cluster struct {
	Name, Listen   string
	Routes         []string
	User, Password string
}
type ServerSettings struct {
	Name, Listen, StoreDir string
	TLS                    TLS
	Users                  []User
	NKeys                  []string
	Cluster                Cluster
	Log                    zerolog.Logger
}
type Server struct{ s *server.Server }

func StartServer(st ServerSettings) (*Server, error) {
	host, port, err := net.SplitHostPort(st.Listen)
	if err != nil {
		return nil, err
	}
	p, _ := strconv.Atoi(port)
	if p == 0 {
		p = -1
	}
	opts := &server.Options{ServerName: st.Name, Host: host, Port: p, JetStream: true, StoreDir: st.StoreDir, NoSigs: true, NoLog: true}
	s, err := server.NewServer(opts)
	if err != nil {
		return nil, err
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		return nil, errors.New("not ready")
	}
	return &Server{s}, nil
}
func (s *Server) ClientURL() string { return s.s.ClientURL() }
func (s *Server) Shutdown()         { s.s.Shutdown(); s.s.WaitForShutdown() }

type ClientSettings struct {
	URLs        []string
	TLS         TLS
	Credentials Credentials
	Name        string
	Log         zerolog.Logger
}

func Connect(ctx context.Context, c ClientSettings) (*nats.Conn, error) {
	return nats.Connect(c.URLs[0], nats.Name(c.Name), nats.MaxReconnects(-1), nats.RetryOnFailedConnect(true), nats.ReconnectWait(250*time.Millisecond))
}
