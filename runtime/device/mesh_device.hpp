#pragma once
// The one device abstraction every backend implements: the simulator today, a remote device
// over the network and real T3K / Galaxy hardware through tt-metal's host API. It is shaped
// after tt-metal's mesh host API (buffers, global semaphores, programs of kernels on cores,
// enqueue, finish, read back, profiler, the fabric it was opened with), so the hardware backend
// is a translation.
//
// Ops reach devices only through this interface (tested with a gmock MeshDevice).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/device/fabric_options.hpp"
#include "runtime/device/types.hpp"
#include "runtime/device/workload.hpp"
#include "topologies/topology.hpp"

namespace cclmesh::runtime {

// Kernel start and end on one core of one chip, in device time (ns since the device epoch).
struct KernelProfile {
  ChipId chip = 0;
  CoreKind core_kind = CoreKind::Tensix;
  CoreCoord core;
  std::string kernel;
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  // When the kernel said its set-up was done (a legacy EDM after its handshake), if it did.
  std::optional<std::uint64_t> ready_ns;
  bool operator==(const KernelProfile&) const = default;
};

// What one direction of an ethernet link carried since the device was opened (or last reset):
// the sender's chip and logical channel, the receiver's, the data packets' payload, and the
// wire time booked (packets and credit words with their framing). An op's use of a link is the
// difference of two readings, one before it is enqueued and one after it finished.
struct LinkTraffic {
  ChipId chip = 0;
  std::uint32_t channel = 0;
  ChipId peer_chip = 0;
  std::uint32_t peer_channel = 0;
  std::uint64_t payload_bytes = 0;
  std::uint64_t busy_ps = 0;
  bool operator==(const LinkTraffic&) const = default;
};

// The device could not complete a workload: a hang (with the backend's diagnosis) or a fault.
class DeviceError : public std::runtime_error {
 public:
  enum class Kind : std::uint8_t { Hang, Fault, Timeout };
  DeviceError(Kind kind, const std::string& report) : std::runtime_error(report), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

// A workload whose circular buffers do not fit in the L1 that the buffers allocated on a core
// leave free: a consequence of the memory config asked for (bad input), where other placement
// errors (std::invalid_argument from enqueue_workload) are the builder's own.
class WorkloadPlacementError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

class MeshDevice {
 public:
  virtual ~MeshDevice() = default;

  virtual const topo::Topology& topology() const = 0;
  virtual std::vector<ChipId> chips() const = 0;
  // The logical worker grid (columns x rows) usable by kernels on every chip.
  virtual CoreCoord worker_grid() const = 0;
  // Logical ethernet channels of `chip` that carry a link, in channel order.
  virtual std::vector<std::uint32_t> active_ethernet_channels(ChipId chip) const = 0;
  // The persistent fabric the device was opened with (tt-metal's fabric config is the
  // device's), which op builders' params must name (Params::fabric) so that their workers
  // connect to the routers running; mode None: the device runs none (legacy mode, each op
  // launches its own EDMs), the ERISC L1 setting still applies.
  virtual const FabricOptions& fabric() const = 0;

  // A buffer at the same address on every chip.
  virtual BufferHandle create_buffer(const BufferConfig& config) = 0;
  // Gives the buffer's memory back on every chip (tt-metal's DeallocateBuffer): a later
  // create_buffer may get it. The handle is dead after: reading, writing, freeing it again or
  // naming it in a workload throws std::invalid_argument. Also std::invalid_argument, and
  // nothing freed, for a buffer enqueued work not finished uses (a workload that names it in
  // MeshWorkload::buffers or names no buffers at all, an enqueued write or read of it): a new
  // buffer at those addresses could be written under the workload's kernels; call finish() first.
  virtual void deallocate_buffer(const BufferHandle& buffer) = 0;
  // Blocking host I/O: happens when called, not in order with enqueued work. std::invalid_argument
  // for a buffer that enqueued work not finished names (a workload, an enqueued write or read):
  // the bytes would not be those of the queue's order; call finish() first, or enqueue the I/O.
  virtual void write_buffer(ChipId chip, const BufferHandle& buffer, std::span<const std::byte> data) = 0;
  virtual void read_buffer(ChipId chip, const BufferHandle& buffer, std::span<std::byte> data) = 0;
  // Enqueue-ordered host I/O (tt-metal's non-blocking EnqueueWriteBuffer / EnqueueReadBuffer):
  // a host command on `chip`'s queue, which runs after every program enqueued before it on that
  // chip has finished and before any enqueued after it starts (work on other chips is not
  // waited for: as tt-metal's per-device command queues). Both return at once.
  // - The write copies `data` at the call: the caller may reuse it on return (tt-metal's
  //   non-blocking write reads the caller's memory later, so it must stay alive; copying is the
  //   safer contract).
  // - The read's `out` must stay alive until finish(); finish() writes every enqueued read's
  //   `out` when it returns normally, each with the buffer's bytes as they were at the read's
  //   turn. A finish() that throws DeviceError writes none of them: the host commands queued
  //   behind the failure never ran, nothing is half-done, and reset() drops them all.
  // - Bad arguments (an unknown chip or buffer, a size other than the buffer's) throw
  //   std::invalid_argument at the call and enqueue nothing. The buffer is in use until finish()
  //   (deallocate_buffer, write_buffer and read_buffer refuse it, as for a workload naming it).
  virtual void enqueue_write_buffer(ChipId chip, const BufferHandle& buffer, std::span<const std::byte> data) = 0;
  virtual void enqueue_read_buffer(ChipId chip, const BufferHandle& buffer, std::span<std::byte> out) = 0;

  // Created once and reused across ops; the initial value is written at the call (no work
  // enqueued before can use a semaphore that did not exist).
  // `reset_global_semaphore` sets its value on every core, enqueue-ordered as tt-metal's
  // GlobalSemaphore::reset_semaphore_value is, as we understand it (a write through the command
  // queue; not checked against its source): on each chip a host command that runs after every
  // program enqueued before it on that chip and before any enqueued after it (at the call on an
  // idle chip), so a reset between two enqueued ops needs no finish(): the second sees the reset
  // value. Like an enqueued write it holds the semaphore until finish() (deallocate refuses it).
  // std::invalid_argument for a handle that is not a live semaphore of this device.
  virtual GlobalSemaphore create_global_semaphore(const std::vector<CoreRange>& cores, CoreKind kind,
                                                  std::uint32_t initial_value) = 0;
  virtual void reset_global_semaphore(const GlobalSemaphore& semaphore, std::uint32_t value) = 0;
  // Gives the semaphore's word back on every core it covers (tt-metal's GlobalSemaphore gives
  // its L1 back when destroyed, as we understand it; not checked against its source): a later create_global_semaphore may get it, as may a buffer. The
  // handle is dead after: resetting it, freeing it again or naming it in a workload throws
  // std::invalid_argument. Also std::invalid_argument, and nothing freed, while enqueued work
  // not finished may use it (a workload that names it in MeshWorkload::global_semaphores or
  // names no global semaphores at all): a new semaphore or buffer at that address could be
  // written under the workload's kernels; call finish() first.
  virtual void deallocate_global_semaphore(const GlobalSemaphore& semaphore) = 0;

  // Asynchronous: returns at once; programs run when the device gets to them, each chip's in
  // the order given. All or nothing: every workload is checked (its placement: kernels, cores,
  // CBs against the L1 the buffers leave; the handles it names) before any is enqueued, each
  // against the device as it will be when that workload is enqueued, after the ones before it;
  // the first refusal is thrown (std::invalid_argument, WorkloadPlacementError) and nothing of
  // any of them is enqueued, so that the next finish() runs none of them. An op of several
  // workloads (all_reduce's reduce-scatter then all-gather) enqueues them in one call: a device
  // that refuses its second leaves no half of the op behind to run in the session's next
  // finish(). (One call rather than a begin/commit pair around enqueue_workload: a backend
  // checks and enqueues a list it sees whole, and a remote device sends it as one request.)
  virtual void enqueue_workloads(std::span<const MeshWorkload> workloads) = 0;
  // One workload: enqueue_workloads of it alone (not virtual: backends implement the list form
  // only, and overriding it hides nothing of this name, so callers keep enqueue_workload).
  void enqueue_workload(const MeshWorkload& workload) { enqueue_workloads({&workload, 1}); }
  // Blocks until every enqueued workload and host command completed (enqueued reads' `out`
  // written); throws DeviceError when one cannot.
  virtual void finish() = 0;

  // The kernel profile: per-chip, per-core kernel start and end times of the workloads finished
  // since the device was opened or last reset, one entry per kernel as it ended. Entries are only
  // appended (until reset(), which empties it), so an index names the same entry on every read:
  // an op's entries are those from profile_size() taken before it was enqueued, read with
  // profile_since() after it finished, at a cost that is the op's, not the device's history's
  // (a served device sends what it is asked for over the wire).
  // Served (RemoteMeshDevice), "opened" is the session's start: a session sees the kernels of its
  // own workloads only, counted from 0, and the server keeps no earlier session's
  // (docs/remote_device.md, "A session's kernel profile").
  virtual std::size_t profile_size() const = 0;
  // Entries [first_entry, profile_size()). std::invalid_argument for a first_entry past
  // profile_size() (an index taken before a reset): require_profile_entry(). A served session's
  // profile may be bounded (`cclmesh serve --max-profile-entries`): its oldest entries dropped, the
  // numbering kept, and a first_entry among them refused as ProfileEntriesDroppedError
  // (profile_range.hpp), never answered with fewer entries.
  virtual std::vector<KernelProfile> profile_since(std::size_t first_entry) const = 0;
  // Every entry (profile_since(0); not virtual, as enqueue_workload): for callers that want the
  // whole list, which a served device sends whole.
  std::vector<KernelProfile> profile() const { return profile_since(0); }
  // Every direction of every ethernet link, always in the same order: what it carried so far.
  // nullopt from a backend that cannot measure its links (hardware without such counters):
  // callers then say the figures are missing rather than show zeros.
  virtual std::optional<std::vector<LinkTraffic>> link_traffic() const = 0;

  // The device as just opened, with the same system, fabric and settings: what tt-metal's user
  // gets from closing the device and opening it again (after a chip reset, on hardware, where
  // a hung kernel leaves the chip unusable). The way back from a DeviceError, after which the
  // device is failed. Nothing of the old session survives: its buffers, global semaphores and
  // enqueued workloads are gone (their handles are no longer valid; their ids may be given
  // again), the profile is empty and the clock starts again from the epoch.
  virtual void reset() = 0;
};

}  // namespace cclmesh::runtime
