package main

import "syscall"

// dieWithParent kills the server when the hub dies, at once: a server
// outliving a killed hub would hold the port and the store from the hub
// started next.
func dieWithParent(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
