#pragma once
// A run with data holds every chip's buffers as real bytes in this process, so a size that is
// nothing to a simulated mesh can be more than the host has (new-user pass, session 41: a Galaxy
// all_gather of 1 GiB with data, 32 chips x 1.1 GiB, ended in "internal error: std::bad_alloc"
// under a memory limit, and without one in the kernel's OOM killer after swapping). Refused
// before the device is built, from the buffers the planning device placed, and once more before
// the op runs, when the host's expected outputs are made and can be counted.
//
// What the process holds besides the buffers, counted: the host's copy of every input (the host
// reference reads them) and a group's inputs gathered for its reference while the inputs are
// written, then the expected outputs (all_gather's one per group, all_reduce's one per chip)
// and one output read back while the outputs are compared. The simulated memories make a page
// only when it is written, so before the op runs the device holds only its inputs' pages.
// Measured (mem41, session 41: peak RSS from /usr/bin/time -v against the count; T3K along
// --cluster-axis 1 at 64 and 256 MiB, Galaxy at 128 MiB; all_gather, reduce_scatter,
// all_reduce, all_to_all): RSS was 0.98-1.05x the count (the rest: the process and the
// simulated chips' own structures, tens of MB), where the buffers alone were 0.5-0.8x of it.
// Session 42, the same way (T3K along --cluster-axis 1): reduce 1.06x at 64 MiB, all_broadcast
// 1.03x and 1.01x at 64 and 256 MiB; broadcast and send_recv were 0.69x and 0.37-0.38x while every
// buffer on every chip was counted, and are 1.01-1.03x counting only what the op writes (the
// sources' inputs; every group chip's output for broadcast, whose root writes its own, the
// receiver's for send_recv).

#include <cstdint>
#include <string>

namespace cclmesh::cli {

// This machine's physical memory in bytes (0 when the system does not say).
std::uint64_t host_memory_bytes();
// What this machine can give a run without swapping now (/proc/meminfo's MemAvailable; the
// physical memory when it does not say). A run with data is checked against it (review41, session
// 41: a T3K all_gather of 2 GiB with data needed ~22 GiB, under the 23.5 GiB physical but past what
// was free: it swapped for 9 minutes and was killed).
std::uint64_t host_memory_available_bytes();

// The bytes a run with data holds at its two peaks, counted from its buffers and tensors.
struct HostMemoryNeed {
  std::uint32_t chips = 0;             // the chips whose buffers hold data
  std::uint64_t buffers_per_chip = 0;  // every buffer the op created, on each chip
  // Of those, the bytes no one writes, which make no page: send_recv's and broadcast's input on
  // every chip but the sources, send_recv's output but on the receivers, both on chips in no group.
  std::uint64_t unwritten_buffers = 0;
  std::uint64_t input_pages = 0;       // the inputs written to the device before the op runs
  std::uint64_t host_inputs = 0;       // the host's copy of them, held while the reference is made
  std::uint64_t group_inputs = 0;      // one group's inputs copied together for its reference
  std::uint64_t reference = 0;         // the expected outputs held until the check (distinct tensors)
  std::uint64_t read_back = 0;         // the largest output read back at once to compare
  // Whether `reference` and `read_back` are counted: not on the planning device, which makes
  // no data (the run is then refused as needing at least the rest).
  bool expected_outputs_counted = false;

  // While the inputs are written and the reference made: the inputs' pages on the device, the
  // host's inputs, one group's copy of them and the expected outputs.
  std::uint64_t while_preparing() const {
    return input_pages + host_inputs + group_inputs + reference;
  }
  // Once the op has run: every written buffer's pages, the expected outputs and one output read back.
  std::uint64_t while_checking() const { return written_buffers() + reference + read_back; }
  std::uint64_t written_buffers() const { return buffers_per_chip * chips - unwritten_buffers; }
  std::uint64_t peak() const { return while_preparing() > while_checking() ? while_preparing() : while_checking(); }
};

// Throws UsageError (exit 2) naming `size_option` and its value when `need.peak()` is more than
// `host_bytes` / `runs_at_once` (host_bytes 0: unknown, nothing refused). `runs_at_once` > 1 is
// `sweep -j`'s processes, each holding one point, so that N points at once fit together (the
// caller passes the physical memory then, the available memory for one run). The
// way out is --no-data, a smaller size, fewer chips (or fewer points at once).
void reject_data_past_host_memory(const std::string& size_option, const std::string& size_value,
                                  const HostMemoryNeed& need, std::uint64_t host_bytes,
                                  std::uint32_t runs_at_once = 1);

// The same for a `run --device` / `sweep --device` client, whose buffers are the server's (bounded
// there: serve --max-host-memory) but whose inputs and expected outputs are made in its own
// process (`need` with no chips). The way out is a smaller size or a device served timing-only
// (--no-data is the server's to give).
void reject_client_data_past_host_memory(const std::string& size_option, const std::string& size_value,
                                         const HostMemoryNeed& need, std::uint64_t host_bytes,
                                         std::uint32_t runs_at_once = 1);

}  // namespace cclmesh::cli
