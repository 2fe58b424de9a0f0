package netns

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The helper process: the test binary re-executed in a namespace, with
// envHelper choosing what it does and envAddr where.
const (
	envHelper = "SLUICE_NETNS_HELPER" // "echo" or "dial"
	envAddr   = "SLUICE_NETNS_ADDR"
)

// dialTimeout bounds each connection attempt; a cut-off host must fail
// within it.
const dialTimeout = time.Second

// TestHelperProcess is not a test: it is the program the other tests run
// inside namespaces. "echo" listens on envAddr, prints "<pid> <addr>" and
// echoes every connection; "dial" connects to envAddr, sends a line and
// prints what comes back, exiting 1 if that fails.
func TestHelperProcess(t *testing.T) {
	switch os.Getenv(envHelper) {
	case "":
		return
	case "echo":
		l, err := net.Listen("tcp", os.Getenv(envAddr))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Printf("%d %s\n", os.Getpid(), l.Addr())
		serveEcho(l)
		os.Exit(0)
	case "dial":
		if err := ping(os.Getenv(envAddr)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println("ok")
		os.Exit(0)
	}
}

func serveEcho(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			io.Copy(c, c)
		}()
	}
}

// ping connects to addr, sends a line and checks that it comes back.
func ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, dialTimeout)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(dialTimeout))
	return echoLine(c, "ping")
}

func echoLine(c net.Conn, line string) error {
	if _, err := fmt.Fprintln(c, line); err != nil {
		return err
	}
	got, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if got != line+"\n" {
		return fmt.Errorf("echo of %q: got %q", line, got)
	}
	return nil
}

func helper(h *Host, mode, addr string) *exec.Cmd {
	cmd := h.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), envHelper+"="+mode, envAddr+"="+addr)
	return cmd
}

// startEcho runs the echo helper in h on h's address and returns the
// command and the address and pid the helper reported.
func startEcho(t *testing.T, h *Host) (cmd *exec.Cmd, addr string, pid int) {
	t.Helper()
	cmd = helper(h, "echo", net.JoinHostPort(h.IP(), "0"))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("echo helper in %s: %v", h.ns, err)
	}
	f := strings.Fields(line)
	if len(f) != 2 {
		t.Fatalf("echo helper printed %q, want \"<pid> <addr>\"", line)
	}
	pid, err = strconv.Atoi(f[0])
	if err != nil {
		t.Fatalf("echo helper printed %q: %v", line, err)
	}
	return cmd, f[1], pid
}

// reach pings addr from host from, or from the root namespace when from
// is nil.
func reach(from *Host, addr string) error {
	if from == nil {
		return ping(addr)
	}
	out, err := helper(from, "dial", addr).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

func TestReachCutOffReconnect(t *testing.T) {
	t.Parallel()
	n := New(t)
	a, b := n.Add(t, "a"), n.Add(t, "b")
	if got, want := []string{n.HostIP(), a.IP(), b.IP()}, []string{n.addr(1), n.addr(2), n.addr(3)}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("addresses %v, want %v", got, want)
	}
	_, aAddr, _ := startEcho(t, a)
	_, bAddr, _ := startEcho(t, b)
	root, err := net.Listen("tcp", net.JoinHostPort(n.HostIP(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	go serveEcho(root)
	rootAddr := root.Addr().String()

	type path struct {
		name     string
		from     *Host
		to       string
		whileCut bool // reachable while a is cut off
	}
	paths := []path{
		{"root to a", nil, aAddr, false},
		{"b to a", b, aAddr, false},
		{"a to root", a, rootAddr, false},
		{"a to b", a, bAddr, false},
		{"b to root", b, rootAddr, true},
		{"root to b", nil, bAddr, true},
	}
	for _, p := range paths {
		if err := reach(p.from, p.to); err != nil {
			t.Errorf("before the cut, %s (%s): %v", p.name, p.to, err)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	// A connection established before the cut: it must hang, not reset,
	// and carry on after Reconnect.
	existing, err := net.DialTimeout("tcp", aAddr, dialTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer existing.Close()
	if err := echoLine(existing, "before"); err != nil {
		t.Fatal(err)
	}

	a.CutOff(t)
	cutAt := time.Now()
	existing.SetDeadline(time.Now().Add(dialTimeout))
	err = echoLine(existing, "during")
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("established connection while cut off: got %v, want a timeout (the connection hangs)", err)
	}
	for _, p := range paths {
		start := time.Now()
		err := reach(p.from, p.to)
		took := time.Since(start)
		switch {
		case p.whileCut && err != nil:
			t.Errorf("a cut off, %s (%s): %v, want it unaffected", p.name, p.to, err)
		case !p.whileCut && err == nil:
			t.Errorf("a cut off, %s (%s) still works", p.name, p.to)
		case !p.whileCut:
			t.Logf("a cut off, %s: fails after %v: %v", p.name, took.Round(time.Millisecond), err)
		}
		// The dialler gives up after dialTimeout; the helper process
		// start adds a little.
		if took > dialTimeout+2*time.Second {
			t.Errorf("a cut off, %s took %v, want at most about %v", p.name, took, dialTimeout)
		}
	}

	a.Reconnect(t)
	reconnectedAt := time.Now()
	for _, p := range paths {
		// The link and ARP take a moment to come back; poll, bounded.
		deadline := time.Now().Add(5 * time.Second)
		for {
			err := reach(p.from, p.to)
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("after Reconnect, %s (%s): %v", p.name, p.to, err)
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	// The bytes sent during the cut are retransmitted with TCP's backoff
	// (doubling from 200 ms), so the resumption can take several seconds
	// after Reconnect; 15 s covers the backoff for a cut this short.
	existing.SetDeadline(time.Now().Add(15 * time.Second))
	got, err := bufio.NewReader(existing).ReadString('\n')
	if err != nil || got != "during\n" {
		t.Fatalf("established connection after Reconnect: got %q, %v; want the echo of the line sent during the cut", got, err)
	}
	t.Logf("established connection: cut off for %v, resumed %v after Reconnect", reconnectedAt.Sub(cutAt).Round(time.Millisecond), time.Since(reconnectedAt).Round(time.Millisecond))
	if err := echoLine(existing, "after"); err != nil {
		t.Errorf("established connection after Reconnect: %v", err)
	}
}

func TestCommandIsTheProgram(t *testing.T) {
	t.Parallel()
	n := New(t)
	h := n.Add(t, "pid")
	cmd, _, pid := startEcho(t, h)
	if pid != cmd.Process.Pid {
		t.Fatalf("helper reports pid %d, Cmd's process is %d: ip netns exec did not exec in place", pid, cmd.Process.Pid)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
		t.Fatalf("after SIGTERM: Wait returned %v, want the helper ended by SIGTERM", err)
	}
}

// TestCleanup checks that a Net leaves nothing behind once its test ends,
// even with a process still running in one of its namespaces.
func TestCleanup(t *testing.T) {
	t.Parallel()
	var (
		n     *Net
		hosts []*Host
		left  *exec.Cmd
	)
	ok := t.Run("net", func(t *testing.T) {
		n = New(t)
		hosts = []*Host{n.Add(t, "x"), n.Add(t, "y")}
		left = hosts[0].Command("sleep", "600")
		if err := left.Start(); err != nil {
			t.Fatal(err)
		}
	})
	if !ok {
		t.FailNow() // the subtest said why
	}
	if n == nil {
		t.Skip("New skipped the subtest")
	}
	waited := make(chan error, 1)
	go func() { waited <- left.Wait() }()
	select {
	case <-waited:
	case <-time.After(5 * time.Second):
		left.Process.Kill()
		t.Errorf("process left in namespace %s still runs after cleanup", hosts[0].ns)
	}

	names := []string{n.bridge}
	for _, h := range hosts {
		names = append(names, h.veth, strings.TrimSuffix(h.veth, "h")+"n")
	}
	links, err := ip("-o", "link", "show")
	if err != nil {
		t.Fatal(err)
	}
	namespaces, err := ip("netns", "list")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if strings.Contains(links, " "+name+":") || strings.Contains(links, " "+name+"@") {
			t.Errorf("interface %s remains after cleanup:\n%s", name, links)
		}
	}
	for _, h := range hosts {
		if strings.Contains(namespaces, h.ns) {
			t.Errorf("namespace %s remains after cleanup:\n%s", h.ns, namespaces)
		}
	}
	addrs, err := ip("-4", "-o", "addr", "show")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(addrs, " "+n.HostIP()+"/") {
		t.Errorf("%s remains in the root namespace after cleanup:\n%s", n.HostIP(), addrs)
	}
}

// TestRemoveStale checks that New removes a namespace and an interface
// named for a process that no longer exists.
func TestRemoveStale(t *testing.T) {
	if os.Getenv(envCluster) != "1" {
		New(t) // skips, saying why
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	id := prefix + strconv.FormatInt(int64(dead.Process.Pid), 36) + "-0"
	ns, link := id+"-stale", id+"b"
	for _, args := range [][]string{{"netns", "add", ns}, {"link", "add", "name", link, "type", "bridge"}} {
		if _, err := ip(args...); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { // in case New did not
		ip("netns", "del", ns)
		ip("link", "del", "dev", link)
	})
	New(t)
	if linkExists(link) {
		t.Errorf("stale interface %s survived New", link)
	}
	if out, _ := ip("netns", "list"); strings.Contains(out, ns) {
		t.Errorf("stale namespace %s survived New:\n%s", ns, out)
	}
}
