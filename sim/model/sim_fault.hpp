#pragma once
// Errors raised by the hardware models.
//
// - SimFault (error tier 3, DESIGN.md): something a simulated program did that the hardware
//   would not survive or that a run must report, stamped with the simulated time and place.
//   AccessError is the one every memory access can raise.
// - ModelConfigError (tier 1): a bad architecture file, SoC descriptor or system description,
//   naming the field, the value and what was expected.

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/engine/time.hpp"
#include "sim/model/core_coord.hpp"

namespace cclmesh::sim {

class SimFault : public std::runtime_error {
 public:
  SimFault(SimTime when, const std::string& what);
  SimTime when() const { return when_; }

 private:
  SimTime when_;
};

enum class MemoryKind : std::uint8_t { TensixL1, EriscL1, Dram, None };  // None: a tile without memory
std::string to_string(MemoryKind kind);

enum class AccessKind : std::uint8_t { Read, Write, Atomic, Watch };
std::string to_string(AccessKind kind);

// An access outside a memory, misaligned where the hardware needs alignment, or aimed at a
// core that has no memory. The message names chip, core, memory, address and size.
class AccessError : public SimFault {
 public:
  struct Details {
    ChipId chip = 0;
    CoreCoord core;
    MemoryKind memory = MemoryKind::TensixL1;
    std::int32_t unit = -1;  // DRAM channel, -1 for L1
    AccessKind access = AccessKind::Read;
    std::uint64_t address = 0;
    std::uint64_t bytes = 0;
    std::uint64_t memory_bytes = 0;
    std::string reason;  // "out of range", "misaligned (4 B)" ...
  };
  AccessError(SimTime when, Details details);
  const Details& details() const { return details_; }

 private:
  Details details_;
};

// Simulated faults that do not stop a run (a packet sent into a link that is down ...), kept
// in the order they happened, for the run's report.
struct FaultRecord {
  SimTime when;
  std::string place;  // "chip 0 eth channel 8"
  std::string what;
};

class FaultLog {
 public:
  void record(SimTime when, std::string place, std::string what) {
    records_.push_back(FaultRecord{when, std::move(place), std::move(what)});
  }
  const std::vector<FaultRecord>& records() const { return records_; }
  bool empty() const { return records_.empty(); }

 private:
  std::vector<FaultRecord> records_;
};

class ModelConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The simulated time of the engine running on this thread, or zero outside a run.
SimTime fault_time_now();

}  // namespace cclmesh::sim
