#pragma once
// Ideal hardware (REFERENCE 10, "what an 'ideal hardware' mode must reproduce"): chips whose
// NoC, DRAM and ERISC put no limit on throughput, next to ethernet links that keep their rate
// (the alpha-beta model's beta) and their one-way latency (its per-hop alpha). The same command
// streams run on it; what a collective then takes is its algorithm's own cost (steps, pipeline
// fill, synchronisation) on the links, to hold against the alpha-beta bounds
// (tools/cclmesh/alpha_beta.hpp) and against the modelled chip.

#include <cstdint>
#include <memory>

#include "sim/model/arch_params.hpp"

namespace cclmesh::sim {

enum class HardwareModel : std::uint8_t {
  Modelled,  // the chip model as calibrated (sim/model/arch/*.yaml)
  Ideal,     // REFERENCE 10: the links' rate and latency set the pace; on-chip steps keep only their latency
};

// `modelled` with every on-chip throughput limit taken out: NoC and DRAM rates 1000x (a 6 KiB
// packet crosses in well under a nanosecond), 64 request slots per core and NoC; ethernet
// frames without framing overhead or a link-level packet header, and one cycle of ERISC time
// to issue or handle a packet (59 and 21 modelled). Kept: the line rate, the link's one-way
// latency, the on-chip latencies (NoC hops, request set-up and issue spacing: tens of
// nanoseconds against a packet's half microsecond on the wire), the transmit queue's depth and
// the sizes of L1, DRAM and frames (so the same buffers and fabric slots are laid out).
ArchSpec ideal_arch_spec(const ArchSpec& modelled);
// ideal_arch_spec of builtin_arch_spec(arch), cached per arch.
std::shared_ptr<const ArchSpec> builtin_ideal_arch_spec(ChipArch arch);

}  // namespace cclmesh::sim
