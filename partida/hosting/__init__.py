"""Hosted bots: programs their authors submitted, run by the server's operator in a sandbox.
`limits` holds the operator's bounds, `sandbox` starts a program under bubblewrap within them,
`cgroup` adds the kernel's memory and process counters where the machine lets it, `verdicts`
names what a misbehaving program did, and `agent` is the stdin/stdout bot protocol spoken to a
sandboxed program (docs/hosted-bots.md)."""
