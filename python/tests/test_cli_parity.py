"""The package against the `floe` binary: same instances, plans, prompts and verdicts. The test
command points FLOE_CLI at the binary it built; without it these tests are skipped."""

import json
import os
import subprocess

import pytest

import floe

CLI = os.environ.get("FLOE_CLI")
pytestmark = pytest.mark.skipif(not CLI, reason="FLOE_CLI is not set")


def run(*args, check=True):
    return subprocess.run([CLI, *args], capture_output=True, text=True, check=check)


def test_generate_solve_prompt_verify_match_the_cli(tmp_path):
    out = tmp_path / "g.jsonl"
    run("generate", "-k", "3", "-n", "5", "-c", "6", "-s", "11", "-o", str(out), "--quiet")
    ours = floe.generate(3, 5, count=6, seed=11)
    assert out.read_text() == "".join(i.to_json() + "\n" for i in ours)
    solved = [json.loads(l) for l in run("solve", "-i", str(out)).stdout.splitlines()]
    assert solved == [floe.solve(i) for i in ours]
    assert run("prompt", "-i", str(out)).stdout == "\n".join(floe.prompt(i) for i in ours)
    plans = tmp_path / "p.jsonl"
    plans.write_text("".join(json.dumps({"moves": ["W" + m for m in s["moves"]]}) + "\n" for s in solved))
    cli = [json.loads(l) for l in run("verify", "-i", str(out), "-p", str(plans), check=False).stdout.splitlines()]
    assert cli == [floe.verify(i, {"moves": ["W" + m for m in s["moves"]]}) for i, s in zip(ours, solved)]
