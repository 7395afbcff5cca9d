// Test support: a TCP port on loopback that nothing listens on, for a server a test starts that
// cannot bind port 0 and report back (Prometheus, Slurm's daemons).
#pragma once

namespace vigil::testing {

// The kernel's choice of a free port on 127.0.0.1, free again once this returns (another process
// may take it before the caller binds it); -1 when no socket can be bound.
int FreeLoopbackPort();

}  // namespace vigil::testing
