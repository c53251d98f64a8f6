//go:build !unix

package bootstrap

import "syscall"

func detached() *syscall.SysProcAttr { return nil }
