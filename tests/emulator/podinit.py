"""The pod side of kvgen's pod emulator: runs as PID 1 of one pod's PID namespace.

    unshare --mount --pid --net --uts --fork podinit.py PLAN.json

The host side (tests/emulator/kubelet.py) resolves everything a kubelet resolves from the API
objects (argv over the image's ENTRYPOINT, `$(VAR)` expansion, env with valueFrom, volume
contents, probes with named ports) and writes PLAN.json. This process does what the kubelet and
the container runtime do on the node, in the pod's own namespaces:

- one root per container: the host's system directories read-only (the image's userland
  stand-in), the image's own files, /proc of the pod's PID namespace with the node's
  /proc/meminfo, /sys/fs/cgroup/memory.max with the container's memory limit, an empty WORKDIR,
  /etc/hosts and /etc/hostname as the kubelet writes them, and each volumeMount bound at its
  mountPath (read-only where asked; emptyDirs shared by the pod's containers, Memory-medium ones
  as a tmpfs of their sizeLimit);
- the process exec'd the way runc does: chroot, chdir WORKDIR, the argv's first word looked up in
  the container's own PATH, no new privileges and no capabilities (`drop: [ALL]`);
- init containers in order; a native sidecar (restartPolicy Always) is started and held until its
  startup probe passes before the next one; then the main containers; exec, httpGet and tcpSocket
  probes with the pod's thresholds and periods scaled down; a container that exits is restarted
  like CrashLoopBackOff, a few times, then the pod has failed;
- once every container is ready, liveness is checked for a few periods, the outcome is written
  and the pod stays up (its servers reachable by its peers) until SIGTERM.

Every event goes to the plan's log as one JSON line. Standard library only: it runs with the
host's /usr/bin/python3, before any chroot.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

PLAN: dict[str, Any] = {}
LOG = None
SYSTEM_DIRS = ("usr", "etc")  # bound read-only; bin, sbin, lib, lib64 are merged-/usr symlinks here
RESTARTS = 2  # a container that exits is restarted this many times (CrashLoopBackOff), then the pod fails


def event(kind: str, **fields: Any) -> None:
    assert LOG is not None
    LOG.write(json.dumps({"t": round(time.monotonic() - START, 3), "event": kind, **fields}) + "\n")
    LOG.flush()


START = time.monotonic()


class PodFailed(Exception):
    pass


def run(*argv: str) -> None:
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode:
        raise PodFailed(f"{' '.join(argv)}: {done.stderr.strip()}")


def bind(source: str, target: str, read_only: bool) -> None:
    run("mount", "--bind", source, target)
    if read_only:
        run("mount", "-o", "remount,bind,ro", target)


def scaled(seconds: float) -> float:
    return max(PLAN["scale"]["min"], seconds * PLAN["scale"]["factor"])


class Container:
    def __init__(self, spec: dict[str, Any], volumes: dict[str, str]):
        self.spec = spec
        self.name: str = spec["name"]
        self.root = os.path.join(PLAN["dir"], "rootfs", self.name)
        self.process: subprocess.Popen[bytes] | None = None
        self.restarts = 0
        self.volumes = volumes
        self.out = open(os.path.join(PLAN["dir"], f"{self.name}.log"), "ab")

    # -- the root -------------------------------------------------------------------------------
    def build_root(self) -> None:
        r = self.root
        os.makedirs(r, exist_ok=True)
        run("mount", "-t", "tmpfs", "-o", "mode=0755", "rootfs", r)
        for name in os.listdir("/"):
            path = os.path.join("/", name)
            if os.path.islink(path):  # merged /usr: bin -> usr/bin ...
                os.symlink(os.readlink(path), os.path.join(r, name))
        for name in SYSTEM_DIRS:
            os.makedirs(os.path.join(r, name))
            run("mount", "--rbind", f"/{name}", os.path.join(r, name))
            run("mount", "-o", "remount,bind,ro", os.path.join(r, name))
        # the image's /usr/local: its engines (stand-ins) on PATH and its installed distributions
        local = os.path.join(r, "usr", "local")
        run("mount", "-t", "tmpfs", "-o", "mode=0755", "image-local", local)
        for path, content in self.spec["image_files"].items():
            self._write(r + path, content["text"], content["mode"])
        # /proc of this pod, with the node's meminfo
        os.makedirs(os.path.join(r, "proc"))
        run("mount", "-t", "proc", "proc", os.path.join(r, "proc"))
        bind(PLAN["files"]["meminfo"], os.path.join(r, "proc", "meminfo"), True)
        # the container's cgroup as the launcher reads it (v2: memory.max)
        cg = os.path.join(r, "sys", "fs", "cgroup")
        os.makedirs(cg)
        run("mount", "-t", "tmpfs", "-o", "mode=0555", "cgroup", cg)
        limit = self.spec.get("memory_limit")
        Path(cg, "memory.max").write_text("max\n" if limit is None else f"{limit}\n")
        # /dev with the runtime's default 64 MiB /dev/shm, /tmp, HOME
        os.makedirs(os.path.join(r, "dev"))
        run("mount", "--rbind", "/dev", os.path.join(r, "dev"))
        run("mount", "-t", "tmpfs", "-o", "size=64m,mode=1777", "shm", os.path.join(r, "dev", "shm"))
        for name, mode in (("tmp", 0o1777), ("root", 0o700), ("run", 0o755)):
            os.makedirs(os.path.join(r, name), exist_ok=True)
            os.chmod(os.path.join(r, name), mode)
        for name in ("hosts", "hostname", "resolv.conf"):
            bind(PLAN["files"][name], os.path.join(r, "etc", name), True)
        # the emulator's own files (the stand-ins, the parser daemon's socket, this container's reports)
        emu = os.path.join(r, "opt", "kvgen-emulator")
        os.makedirs(emu)
        bind(PLAN["emulator"]["dir"], emu, True)
        for where, source in (
            ("run", PLAN["emulator"]["run"]),
            ("state", os.path.join(PLAN["dir"], "state", self.name)),
        ):
            os.makedirs(source, exist_ok=True)
            os.makedirs(os.path.join(r, "opt", "kvgen-emulator-" + where))
            bind(source, os.path.join(r, "opt", "kvgen-emulator-" + where), where == "run")
        # WORKDIR: exists, and holds nothing (no engine binary next to the process)
        os.makedirs(r + self.spec["workdir"], exist_ok=True)
        for mount in self.spec["mounts"]:
            self._mount(mount)

    def _write(self, path: str, text: str, mode: int) -> None:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        Path(path).write_text(text)
        os.chmod(path, mode)

    def _mount(self, mount: dict[str, Any]) -> None:
        source = self.volumes[mount["volume"]]
        if mount.get("subPath"):
            source = os.path.join(source, mount["subPath"])
            if not os.path.exists(source):
                os.makedirs(source)  # the kubelet creates a missing subPath as a directory
        target = self.root + mount["path"]
        self._mountpoint(target, os.path.isdir(source))
        bind(source, target, mount["readOnly"])

    def _mountpoint(self, target: str, directory: bool) -> None:
        """Create a mount point as the runtime does, in the container's writable layer: where the
        path lies in a read-only image directory (a volume at /etc/ssl/internal), the deepest
        existing directory gets a writable overlay over what the image holds there."""
        try:
            os.makedirs(target if directory else os.path.dirname(target), exist_ok=True)
        except OSError as e:
            if e.errno != errno.EROFS:
                raise
            lower = os.path.dirname(target)
            while not os.path.isdir(lower):
                lower = os.path.dirname(lower)
            layers = os.path.join(PLAN["dir"], "layers", self.name)
            os.makedirs(layers, exist_ok=True)
            scratch = os.path.join(layers, str(len(os.listdir(layers))))
            os.makedirs(scratch)
            run("mount", "-t", "tmpfs", "-o", "mode=0755", "layer", scratch)
            os.makedirs(os.path.join(scratch, "upper"))
            os.makedirs(os.path.join(scratch, "work"))
            options = f"lowerdir={lower},upperdir={scratch}/upper,workdir={scratch}/work"
            run("mount", "-t", "overlay", "overlay", "-o", options, lower)
            if lower == os.path.join(self.root, "etc"):  # the runtime's files bound over /etc
                for name in ("hosts", "hostname", "resolv.conf"):
                    bind(PLAN["files"][name], os.path.join(lower, name), True)
            os.makedirs(target if directory else os.path.dirname(target), exist_ok=True)
        if not directory and not os.path.exists(target):
            Path(target).touch()

    # -- processes ------------------------------------------------------------------------------
    def _enter(self) -> None:
        os.chroot(self.root)
        os.chdir(self.spec["workdir"])

    def popen(self, argv: list[str], **kw: Any) -> subprocess.Popen[bytes]:
        prefix = ["/usr/bin/setpriv"]
        if self.spec["no_new_privs"]:
            prefix.append("--no-new-privs")
        if self.spec["drop_all"]:
            prefix += ["--inh-caps=-all", "--bounding-set=-all"]
        return subprocess.Popen(
            [*prefix, "--", *argv], env=self.spec["env"], preexec_fn=self._enter, start_new_session=True, **kw
        )

    def start(self) -> None:
        self.out.write(f"=== start {self.name} (restart {self.restarts}): {json.dumps(self.spec['argv'])}\n".encode())
        self.out.flush()
        self.process = self.popen(self.spec["argv"], stdout=self.out, stderr=subprocess.STDOUT)
        event("started", container=self.name, argv=self.spec["argv"], restarts=self.restarts)

    def exited(self) -> int | None:
        return None if self.process is None else self.process.poll()

    def restart_or_fail(self, why: str) -> None:
        code = self.exited()
        event("exited", container=self.name, code=code, why=why, log=self.tail())
        if self.restarts >= RESTARTS:
            raise PodFailed(
                f"container {self.name} {why} (exit {code}), restarted {self.restarts} times: {self.tail()}"
            )
        self.restarts += 1
        time.sleep(scaled(10))  # the first CrashLoopBackOff delay
        self.start()

    def tail(self, lines: int = 6) -> str:
        text = Path(PLAN["dir"], f"{self.name}.log").read_text(errors="replace")
        return "\n".join(text.splitlines()[-lines:])

    # -- probes ---------------------------------------------------------------------------------
    def probe_once(self, probe: dict[str, Any]) -> tuple[bool, str]:
        timeout = max(PLAN["scale"]["probe_timeout_min"], float(probe.get("timeoutSeconds", 1)))
        if "exec" in probe:
            try:
                done = self.popen(probe["exec"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
                out, _ = done.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(done.pid, signal.SIGKILL)
                done.communicate()
                return False, "exec probe timed out"
            except OSError as exc:
                return False, f"exec probe not started: {exc}"
            return done.returncode == 0, out.decode(errors="replace").strip()[-300:]
        if "httpGet" in probe:
            h = probe["httpGet"]
            url = f"{h.get('scheme', 'HTTP').lower()}://{h.get('host') or PLAN['ip']}:{h['port']}{h.get('path', '/')}"
            try:
                with urllib.request.urlopen(url, timeout=timeout) as response:
                    return 200 <= response.status < 400, f"{url}: {response.status}"
            except urllib.error.HTTPError as exc:
                return 200 <= exc.code < 400, f"{url}: {exc.code}"
            except OSError as exc:
                return False, f"{url}: {exc}"
        if "grpc" in probe:  # emulated as a TCP connect to its port: no gRPC health client here
            try:
                with socket.create_connection((PLAN["ip"], int(probe["grpc"]["port"])), timeout=timeout):
                    return True, "connected (gRPC probe emulated by a TCP connect)"
            except OSError as exc:
                return False, str(exc)
        if "tcpSocket" in probe:
            t = probe["tcpSocket"]
            try:
                with socket.create_connection((t.get("host") or PLAN["ip"], t["port"]), timeout=timeout):
                    return True, "connected"
            except OSError as exc:
                return False, str(exc)
        raise PodFailed(f"container {self.name}: a probe with no handler: {probe}")

    def wait_probe(self, kind: str) -> None:
        """Until the probe succeeds (successThreshold times), as the kubelet's prober does; a
        container that exits meanwhile is restarted; failureThreshold failures restart it too."""
        probe = self.spec["probes"].get(kind)
        if probe is None:
            return
        time.sleep(scaled(float(probe.get("initialDelaySeconds", 0))))
        failures, successes, last = 0, 0, ""
        while True:
            if self.exited() is not None:
                self.restart_or_fail(f"exited before its {kind} probe passed")
                failures, successes = 0, 0
                continue
            ok, last = self.probe_once(probe)
            event("probe", container=self.name, probe=kind, ok=ok, detail=last)
            if ok:
                successes += 1
                if successes >= int(probe.get("successThreshold", 1)):
                    return
            else:
                successes = 0
                failures += 1
                if kind == "readinessProbe":  # not ready is not restarted: probed until the pod's deadline
                    if time.monotonic() - START > PLAN["ready_within"]:
                        raise PodFailed(f"container {self.name} not ready within {PLAN['ready_within']:g}s: {last}")
                elif failures >= int(probe.get("failureThreshold", 3)):
                    self._kill()
                    self.restart_or_fail(f"failed its {kind} {failures} times: {last}")
                    failures = 0
                    continue
            time.sleep(scaled(float(probe.get("periodSeconds", 10))))

    def check_liveness(self, rounds: int) -> None:
        probe = self.spec["probes"].get("livenessProbe")
        if probe is None:
            return
        for _ in range(rounds):
            ok, detail = self.probe_once(probe)
            event("probe", container=self.name, probe="livenessProbe", ok=ok, detail=detail)
            if not ok:
                raise PodFailed(f"container {self.name} failed its liveness probe after start: {detail}")
            time.sleep(scaled(float(probe.get("periodSeconds", 10))))

    def _kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGTERM)
                self.process.wait(timeout=3)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                self._kill()


def make_volumes() -> dict[str, str]:
    """Each volume's directory on the node; Memory-medium emptyDirs become a tmpfs of their
    sizeLimit (in this pod's mount namespace, so the host never sees it)."""
    paths = {}
    for name, volume in PLAN["volumes"].items():
        path = volume["path"]
        os.makedirs(path, exist_ok=True)
        if volume.get("tmpfs"):
            size = volume.get("size")
            options = "mode=1777" + (f",size={size}" if size else "")
            run("mount", "-t", "tmpfs", "-o", options, f"vol-{name}", path)
        paths[name] = path
    return paths


def wait_for_network() -> None:
    ready = PLAN.get("network_ready")
    run("ip", "link", "set", "lo", "up")
    if ready is None:
        return
    deadline = time.monotonic() + 30
    while not os.path.exists(ready):
        if time.monotonic() > deadline:
            raise PodFailed("the pod's network was never set up")
        time.sleep(0.02)


def main() -> int:
    global LOG
    PLAN.update(json.loads(Path(sys.argv[1]).read_text()))
    LOG = open(PLAN["log"], "a")
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(1))
    containers: list[Container] = []
    try:
        wait_for_network()
        socket.sethostname(PLAN["hostname"])
        volumes = make_volumes()
        for spec in PLAN["init"] + PLAN["main"]:
            containers.append(Container(spec, volumes))
        for c in containers:
            c.build_root()
        event("pod-created", ip=PLAN["ip"])
        n_init = len(PLAN["init"])
        for c in containers[:n_init]:
            c.start()
            if c.spec["sidecar"]:
                c.wait_probe("startupProbe")
                event("sidecar-started", container=c.name)
                continue
            code = c.process.wait() if c.process else None
            while code != 0:
                c.restart_or_fail("init container failed")
                code = c.process.wait() if c.process else None
            event("init-done", container=c.name)
        mains = containers[n_init:]
        for c in mains:
            c.start()
        for c in mains:
            c.wait_probe("startupProbe")
        for c in containers:
            if c.spec["sidecar"] or c in mains:
                c.wait_probe("readinessProbe")
        for c in containers:
            if c.spec["sidecar"] or c in mains:
                c.check_liveness(PLAN["liveness_rounds"])
        for c in containers:
            if (c.spec["sidecar"] or c in mains) and c.exited() is not None:
                raise PodFailed(f"container {c.name} exited after start: {c.tail()}")
        event("ready")
        Path(PLAN["outcome"]).write_text(json.dumps({"ready": True}))
        while not stopping:
            for c in containers:
                if (c.spec["sidecar"] or c in mains) and c.exited() is not None:
                    event("exited-after-ready", container=c.name, code=c.exited(), log=c.tail())
            time.sleep(0.1)
        return 0
    except Exception as exc:  # PodFailed, or a fault of the emulator itself: either way the pod did not start
        if not isinstance(exc, PodFailed):
            import traceback

            exc = PodFailed(f"emulator error: {traceback.format_exc()}")
        event("failed", why=str(exc))
        Path(PLAN["outcome"]).write_text(json.dumps({"ready": False, "why": str(exc)}))
        while not stopping:  # held until the host tears the pod down, so its logs stay readable
            time.sleep(0.1)
        return 1
    finally:
        for c in reversed(containers):
            c.stop()


if __name__ == "__main__":
    sys.exit(main())
