"""cocotb bench of the lpgen unit @TOP@ (written by `lpgen rtl ... --testbench cocotb`).

Reads the manifest @TOP@.json beside it (unit, format, parameters, latency, ports) and drives
random and corner-case operands through the unit's fixed-latency valid protocol, with bubbles
(in_valid low, random operands that must be ignored) between them. Every result is compared
with the lpgen Python package (the golden model, `pip install ./python`), and `out_valid` must
rise exactly `latency` cycles after each input that has a result and nowhere else.

Timing: inputs are written at the falling edge of clk and outputs are read late in the same
low phase (after 4 of its 5 ns, in the read-only phase), before the next rising edge: a result
is read D = latency cycles after its inputs were written (a combinational unit's, latency 0,
in the cycle it is driven, before its state registers take the step).

The unit models (what to drive, what to expect) are in models_@TOP@.py beside it. A
wrapper's bench (`--wrap axis`) streams the same operands as AXI4-Stream frames through
cocotbext-axi with random tvalid gaps and random tready backpressure, and checks that every
result arrives once, unchanged and in order, with its beat's tlast (a beat without a result,
the array's without `last`, passes its tlast to the next result).

Environment: LPGEN_VECTORS (random vectors, default 300), LPGEN_SEED (default 1).
Every output is compared, the `overflow` flags too (the golden model's: `flags=True`).
"""

import logging
import os
import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly, Timer

# The unit models (golden vectors from the lpgen package) and the manifests.
from models_@TOP@ import MANIFEST, UNIT, UNITS, WRAPS, with_bubbles


def check(dut, compared, exp, j):
    """The outputs at read j against what was expected of the inputs D reads before: 0 for
    no result, 1 for a result, 2 for one with an overflow flag set."""
    valid = int(dut.out_valid.value)
    if exp is None:
        assert valid == 0, f"read {j}: out_valid high where no result is due"
        return 0
    assert valid == 1, f"read {j}: out_valid low where a result is due"
    assert sorted(exp) == sorted(compared), f"the model gives {sorted(exp)}, not {compared}"
    for name, want in exp.items():
        got = int(getattr(dut, name).value)
        assert got == want, f"read {j}: {name} = {got:#x}, golden {want:#x}"
    return 2 if any(v for k, v in exp.items() if k.startswith("overflow")) else 1


@cocotb.test(skip=bool(WRAPS))
async def golden_vectors(dut):
    """Random and corner-case vectors against the golden model, bit for bit."""
    n = int(os.environ.get("LPGEN_VECTORS", "300"))
    rng = random.Random(int(os.environ.get("LPGEN_SEED", "1")))
    cycles = with_bubbles(rng, UNITS[MANIFEST["unit"]](rng, n))
    d = MANIFEST["latency"]
    inputs = [p["name"] for p in MANIFEST["ports"] if p["direction"] == "input"]
    outputs = [p["name"] for p in MANIFEST["ports"] if p["direction"] == "output"]
    compared = [o for o in outputs if o != "out_valid"]
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    for name in inputs:
        if name != "clk":
            getattr(dut, name).value = 0
    dut.rst.value = 1
    for _ in range(3):
        await FallingEdge(dut.clk)
    dut.rst.value = 0
    await FallingEdge(dut.clk)
    assert int(dut.out_valid.value) == 0, "out_valid high after reset"
    results = flagged = 0
    for j in range(len(cycles) + d):
        ins = cycles[j][0] if j < len(cycles) else {"in_valid": 0}
        for name, v in ins.items():
            getattr(dut, name).value = v
        await Timer(4, unit="ns")
        await ReadOnly()
        if j >= d:
            seen = check(dut, compared, cycles[j - d][1], j)
            results += seen > 0
            flagged += seen == 2
        await FallingEdge(dut.clk)
    dut._log.info(
        "%s: %d cycles, %d results equal to the golden model (%s)%s",
        MANIFEST["top"], len(cycles), results, ", ".join(compared),
        f"; {flagged} with an overflow flag set" if any(
            c.startswith("overflow") for c in compared) else "",
    )
    assert results > 0


def pack(values, ports):
    """Words of `ports` (dicts with name, width) packed LSB first, the first port at bit 0."""
    word, lo = 0, 0
    for p in ports:
        word |= values.get(p["name"], 0) << lo
        lo += p["width"]
    return word


# The wrapper's stream rules (its manifest's `stream`, docs/rtl.md).
RULES = MANIFEST.get("stream") or {"hold_when": {}, "hold": 0, "slots": 1}


def holds_after(ins):
    """Whether the wrapper holds its stream after the beat `ins`."""
    return bool(RULES["hold"]) and all(ins.get(k, 0) == v for k, v in RULES["hold_when"].items())


def stream_beats(cycles):
    """The model's cycles as beats (inputs, expected or None): the steps (in_valid high or
    absent), and dfix-monitor's `clear` alone as a beat counting nothing (mask 0, counts 0);
    the list ends at a beat with a result."""
    beats = []
    for ins, exp in cycles:
        if ins.get("in_valid", 1):
            beats.append((ins, exp))
        elif UNIT["unit"] == "dfix-monitor" and ins["clear"]:
            beats.append((ins | {"mask": 0}, {"seen": 0, "overflows": 0, "overflows_half": 0}))
    while beats and beats[-1][1] is None:
        beats.pop()
    return beats


def result_frames(expected, ends, out_ports):
    """The frames the sink must see: each beat's result (None: none) packed, a frame ending
    at a result whose beat ended a frame, or after a beat without a result that did (its
    tlast goes with the next result)."""
    frames, cur, pending = [], [], False
    for exp, end in zip(expected, ends):
        end = end or pending
        if exp is None:
            pending = end
            continue
        pending = False
        cur.append(pack(exp, out_ports))
        if end:
            frames.append(cur)
            cur = []
    assert not cur, "the last beat has a result and ends its frame"
    return frames


@cocotb.test(skip=not WRAPS)
async def axis_stream(dut):
    """The wrapped unit's vectors as AXI4-Stream frames with random valid gaps and random
    backpressure: every result once, in order, equal to the golden model, tlast kept."""
    from cocotb.triggers import RisingEdge, with_timeout
    from cocotbext.axi import AxiStreamBus, AxiStreamFrame, AxiStreamSink, AxiStreamSource

    n = int(os.environ.get("LPGEN_VECTORS", "300"))
    rng = random.Random(int(os.environ.get("LPGEN_SEED", "1")))
    beats = stream_beats(UNITS[UNIT["unit"]](rng, n))
    ins_ports = [p for p in UNIT["ports"]
                 if p["direction"] == "input" and p["name"] not in ("clk", "rst", "in_valid")]
    out_ports = [p for p in UNIT["ports"] if p["direction"] == "output" and p["name"] != "out_valid"]
    mask = (1 << sum(p["width"] for p in out_ports)) - 1
    frames, ends = [], []
    i = 0
    while i < len(beats):
        k = min(rng.randint(1, 8), len(beats) - i)
        frames.append([pack(b[0], ins_ports) for b in beats[i:i + k]])
        ends += [False] * (k - 1) + [True]
        i += k
    want = result_frames([b[1] for b in beats], ends, out_ports)
    results_sent = sum(len(f) for f in want)
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    source = AxiStreamSource(AxiStreamBus.from_prefix(dut, "s_axis"), dut.clk, dut.rst, byte_lanes=1)
    sink = AxiStreamSink(AxiStreamBus.from_prefix(dut, "m_axis"), dut.clk, dut.rst, byte_lanes=1)
    for bus in (source, sink):
        bus.log.setLevel(logging.WARNING)
    prng = random.Random(rng.random())
    source.set_pause_generator(iter(lambda: prng.random() < 0.3, None))
    sink.set_pause_generator(iter(lambda: prng.random() < 0.5, None))
    hold = RULES["hold"]
    dut.rst.value = 1
    for _ in range(3):
        await RisingEdge(dut.clk)
    dut.rst.value = 0
    for f in frames:
        await source.send(AxiStreamFrame(f))
    results = 0
    for j, exp in enumerate(want):
        got = await with_timeout(sink.recv(), 100 * (len(exp) + hold + 10) * 10, "ns")
        words = [int(x) & mask for x in got.tdata]
        assert len(words) == len(exp), f"frame {j}: {len(words)} results, {len(exp)} sent"
        for k, (g, w) in enumerate(zip(words, exp)):
            assert g == w, f"frame {j} beat {k}: m_axis_tdata = {g:#x}, golden {w:#x}"
        results += len(words)
    for _ in range(2 * (MANIFEST["latency"] + 2)):
        await RisingEdge(dut.clk)
    assert sink.empty(), "results beyond those sent"
    # Throughput: with no gaps and no backpressure, a frame of 64 beats takes 64 cycles plus
    # the pipeline's (one beat a cycle: the buffer holds L + 2 results). The burst replays the
    # first vectors, so the unit is reset first (an accumulation may start from reset).
    for bus in (source, sink):
        bus.set_pause_generator(None)
        bus.pause = False  # the generator's last word would stay
    dut.rst.value = 1
    for _ in range(3):
        await RisingEdge(dut.clk)
    dut.rst.value = 0
    await RisingEdge(dut.clk)
    burst = beats[:64]
    while burst[-1][1] is None:
        burst.pop()
    start = cocotb.utils.get_sim_time("ns")
    await source.send(AxiStreamFrame([pack(b[0], ins_ports) for b in burst]))
    got = await with_timeout(sink.recv(), 100 * (len(burst) + hold * 64 + 10) * 10, "ns")
    cycles = round((cocotb.utils.get_sim_time("ns") - start) / 10)
    exp = [pack(b[1], out_ports) for b in burst if b[1] is not None]
    assert [int(x) & mask for x in got.tdata] == exp, "the burst's results differ"
    # the holds the wrapper must make (docs/rtl.md), each followed by up to P - 1 cycles to
    # come back to the beat's slot
    holds = sum(holds_after(b[0]) for b in burst) * (hold + RULES["slots"] - 1)
    bound = len(burst) + MANIFEST["latency"] + 4 + holds
    assert cycles <= bound, f"{len(burst)} beats took {cycles} cycles (at most {bound})"
    dut._log.info(
        "%s: %d frames, %d results equal to the golden model, in order, under random backpressure",
        MANIFEST["top"], len(frames), results,
    )
    assert results == results_sent > 0
    dut._log.info("burst of %d beats: %d cycles", len(burst), cycles)
