"""``coexist testbed check``: every missing piece is reported with the command that fixes it."""

from coexist.testbed import delay, preflight


def test_missing_tools_ccas_and_compiler_come_with_fixes(monkeypatch):
    monkeypatch.setattr(preflight.shutil, "which",
                        lambda cmd: None if cmd in ("iperf3", "ping") else f"/usr/bin/{cmd}")
    monkeypatch.setattr(delay, "compiler", lambda: None)
    monkeypatch.setattr(preflight.os, "geteuid", lambda: 1000)
    monkeypatch.setattr(preflight, "available_ccas", lambda: {"cubic", "reno"})
    checks = {c.name: c for c in preflight.check(("cubic", "bbr"))}
    assert not checks["root"].ok and "sudo" in checks["root"].fix
    assert not checks["tool iperf3"].ok
    assert checks["tool iperf3"].fix == "apt-get install -y iperf3 iputils-ping"
    assert checks["tool ip"].ok and checks["tool ip"].fix == ""
    assert not checks["C compiler"].ok and "gcc" in checks["C compiler"].fix
    assert checks["tcp cubic"].ok
    assert not checks["tcp bbr"].ok and checks["tcp bbr"].fix == "modprobe tcp_bbr"
    assert "network namespaces" not in checks  # not tried without root


def test_cli_exit_status_follows_checks(monkeypatch, capsys):
    from coexist import cli
    from coexist.testbed.preflight import Check

    monkeypatch.setattr(preflight, "check", lambda ccas: [Check("root", True, "ok"),
                                                          Check("tool x", False, "gone", "fix x")])
    assert cli.main(["testbed", "check"]) == 1
    out = capsys.readouterr().out
    assert "MISSING tool x: gone" in out and "fix: fix x" in out
    monkeypatch.setattr(preflight, "check", lambda ccas: [Check("root", True, "ok")])
    assert cli.main(["testbed", "check"]) == 0
