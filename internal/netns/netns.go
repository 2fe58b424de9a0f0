package netns

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
)

// envCluster is testkafka.EnvCluster, repeated rather than imported so
// that this helper does not pull the Kafka test scaffolding into every
// test that only wants hosts.
const envCluster = "SLUICE_TEST_CLUSTER"

// prefix starts every namespace and interface name this package creates;
// stale-run cleanup only ever looks at names that start with it.
const prefix = "slc"

// lockPath serialises subnet choice across go test processes. It is a
// fixed path, not os.TempDir, so that processes with different TMPDIRs
// still share it.
const lockPath = "/tmp/sluice-netns.lock"

var (
	// pid36 is this process's pid in base 36: at most 5 characters for
	// Linux's largest pid (4194304), which keeps names under IFNAMSIZ.
	pid36 = strconv.FormatInt(int64(os.Getpid()), 36)
	// seq makes names unique within the process.
	seq atomic.Uint64
	// subnetMu serialises subnet choice within the process; the lock file
	// does it between processes.
	subnetMu sync.Mutex
	// ownName matches the names of this package and captures the pid.
	ownName = regexp.MustCompile(`^` + prefix + `([0-9a-z]+)-`)
)

// nextID returns a fresh name stem, "slc<pid36>-<n36>": 3+5+1+n chars,
// leaving room for a one-letter suffix within Linux's 15.
func nextID() string {
	return prefix + pid36 + "-" + strconv.FormatUint(seq.Add(1), 36)
}

// Net is a private bridge with an IPv4 /24; the root namespace (the test
// process, and a Kafka cluster bound on HostIP) is .1 on it.
type Net struct {
	bridge string
	subnet [3]byte // the /24's first three octets

	mu    sync.Mutex
	next  int // last octet of the next host
	hosts []*Host
}

// Host is a network namespace attached to a Net by a veth pair.
type Host struct {
	net  *Net
	ns   string // namespace name
	veth string // bridge-side end, in the root namespace
	ip   string

	// cmds are the commands Command made. Cleanup kills each one that
	// was started by its pid, not only what `ip netns pids` lists: a
	// process started just before cleanup may still be `ip netns exec`
	// in the root namespace, about to enter this one, and would escape a
	// kill by namespace and outlive its deletion.
	mu   sync.Mutex
	cmds []*exec.Cmd
}

// New creates the bridge, brings it up and gives the root namespace
// HostIP. t.Cleanup removes everything New and Add created (namespaces,
// veths, bridge) and kills processes left in the namespaces, even after a
// failed test.
//
// It skips the test unless SLUICE_TEST_CLUSTER=1; with it set, missing
// root or a failing `ip netns` fail the test.
func New(t testing.TB) *Net {
	t.Helper()
	if os.Getenv(envCluster) != "1" {
		t.Skipf("set %s=1 to run the tests that put processes on hosts of their own (network namespaces; needs root and iproute2)", envCluster)
	}
	if os.Geteuid() != 0 {
		t.Fatalf("%s=1, but network namespaces need root (euid %d)", envCluster, os.Geteuid())
	}
	if _, err := ip("netns", "list"); err != nil {
		t.Fatalf("%s=1, but network namespaces do not work here: %v", envCluster, err)
	}

	unlock, err := lockSubnets()
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	removeStale(t)

	n := &Net{bridge: nextID() + "b", next: 2}
	if _, err := ip("link", "add", "name", n.bridge, "type", "bridge"); err != nil {
		t.Fatal(err)
	}
	// Registered right after the bridge exists so that a failure below
	// still removes it.
	t.Cleanup(func() { n.close(t) })
	subnet, err := freeSubnet()
	if err != nil {
		t.Fatal(err)
	}
	n.subnet = subnet
	// IPv6 link-local addresses would only add router solicitations and
	// DAD to the segment; nothing here uses IPv6.
	for _, args := range [][]string{
		{"link", "set", "dev", n.bridge, "addrgenmode", "none"},
		{"addr", "add", n.HostIP() + "/24", "dev", n.bridge},
		{"link", "set", "dev", n.bridge, "up"},
	} {
		if _, err := ip(args...); err != nil {
			t.Fatal(err)
		}
	}
	return n
}

// HostIP is the root namespace's address on the bridge, e.g. "10.77.3.1":
// what a Kafka cluster should bind and advertise so that hosts reach it.
func (n *Net) HostIP() string { return n.addr(1) }

func (n *Net) addr(last int) string {
	return fmt.Sprintf("%d.%d.%d.%d", n.subnet[0], n.subnet[1], n.subnet[2], last)
}

// Add creates a namespace with a veth pair, one end on the bridge and the
// other, named eth0, in the namespace with the next address (.2, .3, …),
// lo up and a default route via HostIP. name only makes the namespace
// easier to recognise in `ip netns list`.
//
// All hosts are on one L2 segment with the root namespace, so neither
// forwarding nor rp_filter settings matter: nothing is routed.
func (n *Net) Add(t testing.TB, name string) *Host {
	t.Helper()
	n.mu.Lock()
	if n.next > 254 {
		n.mu.Unlock()
		t.Fatalf("netns: no address left on %s", n.bridge)
	}
	id := nextID()
	h := &Host{net: n, ns: id + "-" + name, veth: id + "h", ip: n.addr(n.next)}
	n.next++
	n.hosts = append(n.hosts, h)
	n.mu.Unlock()

	inner := id + "n" // renamed eth0 once inside the namespace
	steps := [][]string{
		{"netns", "add", h.ns},
		{"link", "add", "name", h.veth, "type", "veth", "peer", "name", inner},
		{"link", "set", "dev", h.veth, "addrgenmode", "none"},
		{"link", "set", "dev", inner, "addrgenmode", "none"},
		{"link", "set", "dev", inner, "netns", h.ns, "name", "eth0"},
		{"link", "set", "dev", h.veth, "master", n.bridge},
		{"link", "set", "dev", h.veth, "up"},
		{"-n", h.ns, "link", "set", "dev", "lo", "up"},
		{"-n", h.ns, "addr", "add", h.ip + "/24", "dev", "eth0"},
		{"-n", h.ns, "link", "set", "dev", "eth0", "up"},
		{"-n", h.ns, "route", "add", "default", "via", n.HostIP()},
	}
	for _, args := range steps {
		if _, err := ip(args...); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// IP is the host's address on the bridge.
func (h *Host) IP() string { return h.ip }

// Command runs name in the host's namespace. `ip netns exec` execs the
// program in place, so the Cmd's process is the program itself: its pid
// is cmd.Process.Pid and signals sent to it reach the program.
func (h *Host) Command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(ipPath(), append([]string{"netns", "exec", h.ns, name}, args...)...)
	h.mu.Lock()
	h.cmds = append(h.cmds, cmd)
	h.mu.Unlock()
	return cmd
}

// killStarted SIGKILLs every command of the host's that was started.
// Cleanup runs after the test function returns, so no Start races with
// reading cmd.Process; a Wait may, which is why ProcessState is not read:
// Kill on a waited-for process returns ErrProcessDone.
func (h *Host) killStarted(t testing.TB) {
	t.Helper()
	h.mu.Lock()
	cmds := h.cmds
	h.mu.Unlock()
	for _, cmd := range cmds {
		if cmd.Process == nil {
			continue
		}
		if err := cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
			t.Errorf("netns: kill %d: %v", cmd.Process.Pid, err)
		}
	}
}

// CutOff sets the bridge side of the host's veth down: the host reaches
// no one and no one reaches it. Nothing is reset: new connections in
// either direction time out or fail with "no route to host", and
// established TCP connections hang (writes are buffered and
// retransmitted, reads block) until Reconnect.
func (h *Host) CutOff(t testing.TB) {
	t.Helper()
	if _, err := ip("link", "set", "dev", h.veth, "down"); err != nil {
		t.Fatal(err)
	}
}

// Reconnect undoes CutOff. The bridge runs no STP, so the port forwards
// as soon as it is up; established connections resume at TCP's next
// retransmission.
func (h *Host) Reconnect(t testing.TB) {
	t.Helper()
	if _, err := ip("link", "set", "dev", h.veth, "up"); err != nil {
		t.Fatal(err)
	}
}

// close kills what is left in the namespaces, then removes veths,
// namespaces and the bridge, reporting every failure but going on.
func (n *Net) close(t testing.TB) {
	t.Helper()
	n.mu.Lock()
	hosts := n.hosts
	n.mu.Unlock()
	for _, h := range hosts {
		h.killStarted(t)
		killAll(t, h.ns)
		// Deleting the veth explicitly, rather than relying on the
		// namespace taking it along, matters when a process outlives the
		// kill: the namespace, and its end of the pair, would live on.
		if _, err := ip("link", "del", "dev", h.veth); err != nil && linkExists(h.veth) {
			t.Errorf("netns cleanup: %v", err)
		}
		if _, err := ip("netns", "del", h.ns); err != nil {
			t.Errorf("netns cleanup: %v", err)
		}
	}
	if _, err := ip("link", "del", "dev", n.bridge); err != nil {
		t.Errorf("netns cleanup: %v", err)
	}
}

// killAll SIGKILLs the processes still in namespace ns: a test that
// forgot one must not leave it running, nor keep the namespace alive.
func killAll(t testing.TB, ns string) {
	t.Helper()
	out, err := ip("netns", "pids", ns)
	if err != nil {
		t.Errorf("netns cleanup: %v", err)
		return
	}
	for _, f := range strings.Fields(out) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			continue
		}
		t.Logf("netns: killing pid %d left in namespace %s", pid, ns)
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			t.Errorf("netns: kill %d: %v", pid, err)
		}
	}
}

// lockSubnets takes the lock file that serialises subnet choice between
// processes (and, with subnetMu, within this one). Between choosing a free
// /24 and putting .1 on the bridge no other run may look.
func lockSubnets() (unlock func(), err error) {
	subnetMu.Lock()
	f, err := os.OpenFile(lockPath, os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		subnetMu.Unlock()
		return nil, fmt.Errorf("netns: subnet lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		subnetMu.Unlock()
		return nil, fmt.Errorf("netns: subnet lock %s: %w", lockPath, err)
	}
	return func() {
		f.Close() // releases the flock
		subnetMu.Unlock()
	}, nil
}

// freeSubnet returns the first 10.77.N.0/24 that overlaps no address in
// the root namespace. Every Net's bridge lives in the root namespace with
// .1, so another run's subnet is always visible here.
func freeSubnet() ([3]byte, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return [3]byte{}, fmt.Errorf("netns: list addresses: %w", err)
	}
	for i := 0; i < 256; i++ {
		cand := &net.IPNet{IP: net.IPv4(10, 77, byte(i), 0).To4(), Mask: net.CIDRMask(24, 32)}
		taken := false
		for _, a := range addrs {
			in, ok := a.(*net.IPNet)
			if ok && in.IP.To4() != nil && (in.Contains(cand.IP) || cand.Contains(in.IP)) {
				taken = true
				break
			}
		}
		if !taken {
			return [3]byte{10, 77, byte(i)}, nil
		}
	}
	return [3]byte{}, errors.New("netns: every 10.77.N.0/24 overlaps an address in the root namespace")
}

// removeStale deletes namespaces and interfaces whose name says a process
// that no longer exists created them (a run killed before its cleanup).
// Anything whose pid is alive, or that is not ours, stays.
func removeStale(t testing.TB) {
	t.Helper()
	stale := func(name string) bool {
		m := ownName.FindStringSubmatch(name)
		if m == nil {
			return false
		}
		pid, err := strconv.ParseInt(m[1], 36, 64)
		if err != nil || pid <= 0 {
			return false
		}
		// Signal 0 checks existence; EPERM would mean it exists.
		return errors.Is(syscall.Kill(int(pid), 0), syscall.ESRCH)
	}
	out, err := ip("-o", "link", "show")
	if err != nil {
		t.Fatal(err)
	}
	var links []string
	for _, line := range strings.Split(out, "\n") {
		// "12: slcabc-1h@if11: <...>"
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		if name, _, _ := strings.Cut(strings.TrimSuffix(f[1], ":"), "@"); stale(name) {
			links = append(links, name)
		}
	}
	nsOut, err := ip("netns", "list")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(nsOut, "\n") {
		// "slcabc-2-a (id: 3)"
		f := strings.Fields(line)
		if len(f) == 0 || !stale(f[0]) {
			continue
		}
		killAll(t, f[0])
		if _, err := ip("netns", "del", f[0]); err != nil {
			t.Errorf("netns: removing stale namespace: %v", err)
		} else {
			t.Logf("netns: removed stale namespace %s", f[0])
		}
	}
	for _, name := range links {
		if !linkExists(name) { // went with its namespace or its peer
			continue
		}
		if _, err := ip("link", "del", "dev", name); err != nil {
			t.Errorf("netns: removing stale interface: %v", err)
		} else {
			t.Logf("netns: removed stale interface %s", name)
		}
	}
}

func linkExists(name string) bool {
	_, err := net.InterfaceByName(name)
	return err == nil
}

// ipPath finds ip even when PATH lacks /usr/sbin, as it often does for
// a non-login shell.
func ipPath() string {
	if p, err := exec.LookPath("ip"); err == nil {
		return p
	}
	return "/usr/sbin/ip"
}

// ip runs `ip args…` and returns its output; an error names the command
// line and carries its combined output.
func ip(args ...string) (string, error) {
	var out bytes.Buffer
	cmd := exec.Command(ipPath(), args...)
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return out.String(), nil
}
