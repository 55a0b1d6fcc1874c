#pragma once
// What an op builder hands a device: per chip, a Program of kernels on cores with their runtime
// args (the encoded command streams), circular buffers and semaphores. A MeshWorkload is plain
// data: builders produce it without touching a device, so they are unit-tested without one.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runtime/device/types.hpp"

namespace cclmesh::runtime {

// Which processor of a Tensix core runs a kernel: the two data-movement RISC-Vs (BRISC /
// NCRISC), or the compute RISC-Vs (the three TRISCs, which run one compute kernel together and
// have no NoC access: a compute kernel moves data only through its core's CBs and L1).
enum class DataMovementProcessor : std::uint8_t { Riscv0, Riscv1, Compute };
// "dm0", "dm1", "compute": as hang reports and traces name the processor.
inline const char* processor_name(DataMovementProcessor p) {
  return p == DataMovementProcessor::Riscv0 ? "dm0" : p == DataMovementProcessor::Riscv1 ? "dm1" : "compute";
}
enum class NocIndex : std::uint8_t { Noc0 = 0, Noc1 = 1 };

struct KernelSpec {
  // A kernel from the registry (kernels/kernel_registry.hpp): the same name selects the
  // compiled-in function on the simulator and the kernel source file on hardware.
  std::string kernel;
  CoreKind core_kind = CoreKind::Tensix;
  std::vector<CoreRange> cores;
  DataMovementProcessor processor = DataMovementProcessor::Riscv0;
  NocIndex noc = NocIndex::Noc0;
  std::vector<std::uint32_t> compile_time_args;
  // Per-core runtime args; a core of `cores` without an entry gets `common_runtime_args`.
  std::map<CoreCoord, std::vector<std::uint32_t>> runtime_args;
  std::vector<std::uint32_t> common_runtime_args;
  std::map<std::string, std::string> defines;
  bool operator==(const KernelSpec&) const = default;
};

struct CircularBufferSpec {
  std::uint32_t cb_id = 0;
  std::vector<CoreRange> cores;
  std::uint32_t num_pages = 0;
  std::uint32_t page_size_bytes = 0;
  bool operator==(const CircularBufferSpec&) const = default;
};

// A per-program semaphore: one 32-bit L1 word on each of `cores`, reset to `initial_value`
// at launch. Kernels find it by id (get_semaphore(id)).
struct SemaphoreSpec {
  std::uint32_t id = 0;
  CoreKind core_kind = CoreKind::Tensix;
  std::vector<CoreRange> cores;
  std::uint32_t initial_value = 0;
  bool operator==(const SemaphoreSpec&) const = default;
};

struct Program {
  std::vector<KernelSpec> kernels;
  std::vector<CircularBufferSpec> circular_buffers;
  std::vector<SemaphoreSpec> semaphores;
  bool operator==(const Program&) const = default;
};

struct MeshWorkload {
  std::string name;                     // e.g. "all_gather", for traces and reports
  std::map<ChipId, Program> programs;   // chips without an entry run nothing
  // The buffers its kernels read or write (the op's tensors): the device refuses the workload
  // if one was freed, and refuses to free one until the workload has finished. Empty: it does
  // not say, and the device frees no buffer until it has finished (MeshDevice::deallocate_buffer).
  std::vector<BufferHandle> buffers = {};  // = {}: {name, programs} still compiles under -Wextra
  // The global semaphores its kernels wait on or increment, as for buffers: the device refuses
  // the workload if one was freed, and refuses to free one until the workload has finished.
  // Empty: it does not say, and the device frees no global semaphore until it has finished
  // (MeshDevice::deallocate_global_semaphore).
  std::vector<GlobalSemaphore> global_semaphores = {};
};

}  // namespace cclmesh::runtime
