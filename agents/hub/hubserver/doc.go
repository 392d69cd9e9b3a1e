// Package hubserver runs the hub's NATS server with JetStream, embedded in
// the program agentctl-hub: the only package of agentctl that links the
// server's code, whose packages start work of their own when a program
// starts (a sampler reading /proc every second, among others). Every
// other agentctl process, runners and seats included, is a NATS client
// only (package hub).
//
// It decides who may connect and refuses settings that would open the hub
// to anyone: never anonymous off loopback, for clients and routes alike.
// It accepts the users and keys it is given with the permissions it is
// given; which subjects those are is package hub's (Identity.Permissions).
//
// It never touches streams, subjects or the runtime folder beyond the
// JetStream store it is given (Settings.StoreDir, created private), never
// reads agentctl.yaml or a secret file (its caller hands it plain
// settings), and the server never writes to stdout nor handles signals:
// the embedding program owns both.
package hubserver
