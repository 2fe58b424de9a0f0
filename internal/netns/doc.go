// Package netns is a test helper that gives processes their own hosts:
// each Host is a Linux network namespace with its own IPv4 address on a
// private bridge (a Net) that the test creates and removes.
//
// It exists for the fault tests of docs/faults.md, fault 3 in particular:
// several `sluice server` instances, each on a host of its own, share a
// Kafka cluster bound on the bridge (Net.HostIP), and one of them is cut
// off from everything and reconnected, which loopback addresses in one
// namespace cannot do.
//
// The helper needs root and iproute2 (`ip netns`); it runs only with the
// cluster tests (SLUICE_TEST_CLUSTER=1, see testkafka.EnvCluster) and
// skips otherwise. With the variable set, missing root or a failing
// `ip netns` fails the test rather than skipping it, so a run that asked
// for the cluster tests cannot pass without them.
//
// A worked example:
//
//	n := netns.New(t)                                  // bridge slc…, 10.77.N.1/24 in the root namespace
//	c := testkafka.StartCluster(t, 3, n.HostIP())      // Kafka reachable from every host
//	a := n.Add(t, "a")                                 // namespace with 10.77.N.2
//	cmd := a.Command(sluiceBin, "server", "--listen", a.IP()+":8080", "--brokers", c.Brokers)
//	// ... start cmd; cmd.Process is the server itself, so signals reach it
//	a.CutOff(t)                                        // a reaches no one, no one reaches a
//	a.Reconnect(t)
//
// CutOff sets the bridge side of the host's veth pair down. Nothing is
// reset: new connections in either direction time out (or fail with "no
// route to host" once ARP gives up), and established TCP connections
// hang, their data retransmitted by TCP; after Reconnect they carry on
// at the next retransmission, which TCP's backoff may delay by seconds.
//
// Names start with "slc" followed by the creating process's pid in base 36,
// so New can remove what a killed earlier run left behind: a namespace or
// interface whose pid no longer exists is provably stale. Subnets are chosen
// under a lock file (/tmp/sluice-netns.lock) among 10.77.0.0/24 to
// 10.77.255.0/24, skipping any that overlaps an address in the root
// namespace, so parallel tests and parallel `go test` processes never share one.
package netns
