#!/usr/bin/env python3
"""Sums a callgrind profile's self cost (instructions) by simulator category, per event.

The ninth sim-speed pass's accounting (docs/performance.md, "Instructions per event, accounted"):

    valgrind --tool=callgrind --callgrind-out-file=cg.out \\
        build/tools/cclmesh/cclmesh run --system t3k --op all_gather --size 8MiB --no-data --json cg.json
    callgrind_annotate --threshold=100 cg.out > cg.txt
    scripts/callgrind_by_category.py cg.txt EVENTS [CATEGORY ...]

EVENTS: the run's `sim_events`. Each function goes to the first category whose pattern its
demangled name matches (self cost, so the categories add up to the total); naming a category
also lists its largest functions. Inlining moves cost into the caller's category: compare
builds by their totals, and by categories only between builds that inline alike.
"""
import collections
import re
import sys

CATEGORIES = [
    ("dispatch: run loop", r"Engine::run_loop|Engine::run_while|Engine::skip_event|Engine::has_run|run_owned|drop_pooled"),
    ("setup and host (YAML, fmt, loader, runtime, command building)",
     r"YAML|fmt::|_dl_|do_lookup|cclmesh::runtime::|cclmesh::topo::|cclmesh::cmd::|cclmesh::cli::|CLI::|"
     r"std::vector<cclmesh::cmd|~Chip|CommandWriter|_Rb_tree|std::map|Topology|ArchParams|SocDescriptor|"
     r"std::_Hashtable|__libc_start|_start$"),
    ("malloc / free", r"malloc|_int_free|^free$|\bfree\b|operator new|operator delete|unlink_chunk|consolidate|tcache"),
    ("event queue: push", r"EventQueue::push|EventQueue::insert_into_run|EventQueue::take_sequence|EventQueue::heap_push|"
                          r"Engine::check_schedulable|CallbackPool::allocate"),
    ("event queue: pop and refill", r"EventQueue::|CallbackPool::release"),
    ("fiber switches, wakes, parks", r"Fiber::|jump_fcontext|ontop_fcontext|resume_trampoline|Engine::wake|"
                                     r"Engine::park_current|require_current_actor|ActivityListener::wait_blocking|"
                                     r"NocBarrier::await_suspend|block_on|WordWait|MemoryRegion::park|"
                                     r"wait_for_activity_hinted|wait_for_l1_activity|settle_issue_debt"),
    ("NoC: link hops (cross_links)", r"Noc::cross_links|Noc::walk|Noc::step|Noc::link_at|Noc::serve"),
    ("NoC: transfer_time / cycles_to_time", r"transfer_time|cycles_to_time|__udivti3|__divti3|ceil_div"),
    ("NoC: source NIU, target NIU, back-pressure (deliver)", r"Noc::inject|Noc::absorb|Noc::deliver|"
                                                             r"Noc::apply_backpressure|Noc::ack_latency|Noc::hops"),
    ("NoC: completion clocks, alarms, transaction ids", r"Noc::resolve|NocPort::arm|NocPort::resolve|NocPort::complete|"
                                                        r"NocPort::clock|NocPort::trid|NocPort::some_trid|"
                                                        r"NocPort::progress|NocPort::happened_since|NocPort::want|"
                                                        r"NocPort::issue_trid|NocPort::.*alarm|run_pooled<cclmesh::sim::NocPort"),
    ("NoC: event bodies (scheduled lambdas)", r"run_pooled<cclmesh::sim::Noc::"),
    ("NoC: requests, slots, NIU line, endpoints", r"Noc::|NocPort::|WaitingPacket|InlineTask|Chip::endpoint|"
                                                  r"Chip::dram_bank|std::deque|RingQueue"),
    ("memory: sample, land, store, pages", r"MemoryRegion::sample|MemoryRegion::land|MemoryRegion::store|"
                                            r"MemoryRegion::page|MemoryRegion::fill|MemoryRegion::defer|"
                                            r"MemoryRegion::write|MemoryRegion::read|MemoryRegion::can_defer|"
                                            r"MemoryRegion::atomic|PayloadBuffer|memmove|memcpy|memset"),
    ("memory: access checks", r"MemoryRegion::check"),
    ("memory: L1 activity (notify, listeners)", r"L1Activity::|ActivityListener::|MemoryRegion::notify"),
    ("ethernet: send, wire, landing, ERISC", r"EthCore|EthLink|EthParams|PacketCorruption"),
    ("kernel: fabric router loop", r"kernel_main_fabric_router"),
    ("kernel: fabric mux loop", r"kernel_main_fabric_mux"),
    ("kernel: CCL interpreter", r"kernel_main_ccl_interpreter|cclmesh::kernels::"),
    ("kernel: dataflow API (sim/device)", r"^[a-z_0-9]+\(|cclmesh::sim::device::|CircularBuffer|KernelContext"),
    ("other simulator", r"cclmesh::"),
]
LINE = re.compile(r"\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+\S+?:(.*)$")


def category(name):
    for title, pattern in CATEGORIES:
        if re.search(pattern, name):
            return title
    return "other"


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    costs = []
    for line in open(sys.argv[1]):
        m = LINE.match(line)
        if m:
            name = re.sub(r"\s*\[[^\]]*\]\s*$", "", m.group(2))
            costs.append((int(m.group(1).replace(",", "")), name))
    events = int(sys.argv[2])
    total = sum(c for c, _ in costs)
    by = collections.defaultdict(int)
    members = collections.defaultdict(list)
    for cost, name in costs:
        by[category(name)] += cost
        members[category(name)].append((cost, name))
    print(f"{total / 1e6:.1f}M instructions, {events} events, {total / events:.0f} per event")
    for title, cost in sorted(by.items(), key=lambda item: -item[1]):
        print(f"{cost / 1e6:8.1f}M {100 * cost / total:5.1f}% {cost / events:6.0f}/event  {title}")
    for title in sys.argv[3:]:
        print(f"== {title}")
        for cost, name in sorted(members[title], reverse=True)[:20]:
            print(f"  {cost / 1e6:7.2f}M {name[:140]}")


if __name__ == "__main__":
    main()
