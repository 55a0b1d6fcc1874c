#include "sim/model/arch_params.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <map>
#include <mutex>

#include "sim/engine/cycle_counter.hpp"
#include "sim/model/sim_fault.hpp"
#include "topologies/data_paths.hpp"

namespace cclmesh::sim {

std::string_view to_string(ChipArch arch) {
  switch (arch) {
    case ChipArch::WormholeB0: return "wormhole_b0";
    case ChipArch::Blackhole: return "blackhole";
  }
  return "unknown";
}

std::int64_t EthParams::frames(std::int64_t payload_bytes) const {
  const std::int64_t packet = payload_bytes + packet_header_bytes;
  return (packet + max_frame_bytes - 1) / max_frame_bytes;
}

std::int64_t EthParams::wire_bytes(std::int64_t payload_bytes) const {
  return payload_bytes + packet_header_bytes + frames(payload_bytes) * frame_overhead_bytes;
}

namespace {

class Fields {
 public:
  Fields(std::string file, YAML::Node root) : file_(std::move(file)), root_(std::move(root)) {}

  YAML::Node node(const std::string& dotted) const {
    YAML::Node current;
    current.reset(root_);  // rebinds; plain assignment would overwrite the tree (yaml-cpp)
    std::size_t begin = 0;
    while (true) {
      const std::size_t dot = dotted.find('.', begin);
      const std::string key = dotted.substr(begin, dot == std::string::npos ? std::string::npos : dot - begin);
      YAML::Node next = current[key];
      if (!next) throw ModelConfigError(fmt::format("{}: missing field '{}'", file_, dotted));
      current.reset(next);
      if (dot == std::string::npos) return current;
      begin = dot + 1;
    }
  }

  std::int64_t integer(const std::string& dotted, std::int64_t min_value) const {
    YAML::Node n = node(dotted);
    std::int64_t value = 0;
    try {
      value = n.as<std::int64_t>();
    } catch (const YAML::Exception&) {
      throw ModelConfigError(fmt::format("{}: field '{}' = '{}' must be an integer", file_, dotted, n.as<std::string>("?")));
    }
    if (value < min_value) {
      throw ModelConfigError(fmt::format("{}: field '{}' = {} must be at least {}", file_, dotted, value, min_value));
    }
    return value;
  }

  std::string text(const std::string& dotted) const { return node(dotted).as<std::string>(); }

  // milli-bytes per cycle -> bytes per second, exact.
  Bandwidth milli_per_cycle(const std::string& dotted, std::int64_t clock_hz) const {
    const std::int64_t milli = integer(dotted, 1);
    __extension__ typedef __int128 Wide;  // milli * clock_hz can exceed int64 for fast clocks
    const Wide bps = static_cast<Wide>(milli) * clock_hz;
    if (bps % 1000 != 0) {
      throw ModelConfigError(fmt::format("{}: field '{}' = {} milli-B/c is not a whole number of B/s at {} Hz", file_,
                                         dotted, milli, clock_hz));
    }
    return Bandwidth::bytes_per_second(static_cast<std::int64_t>(bps / 1000));
  }

  const std::string& file() const { return file_; }

 private:
  std::string file_;
  YAML::Node root_;
};

ChipArch parse_arch(const std::string& text, const std::string& file) {
  if (text == "wormhole_b0") return ChipArch::WormholeB0;
  if (text == "blackhole") return ChipArch::Blackhole;
  throw ModelConfigError(fmt::format("{}: field 'arch' = '{}' must be wormhole_b0 or blackhole", file, text));
}

NiuRates niu(const Fields& f, const std::string& kind, std::int64_t clock_hz) {
  return NiuRates{f.milli_per_cycle("noc.niu." + kind + ".inject_milli_bytes_per_cycle", clock_hz),
                  f.milli_per_cycle("noc.niu." + kind + ".absorb_milli_bytes_per_cycle", clock_hz)};
}

// 100 ns: the grid of any clock that is a whole number of 10 MHz steps.
constexpr SimTime kLongestClockGrid = SimTime::from_ps(100'000);

}  // namespace

ArchParams load_arch_params(const std::filesystem::path& path) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path.string());
  } catch (const YAML::Exception& e) {
    throw ModelConfigError(fmt::format("{}: cannot read architecture file: {}", path.string(), e.what()));
  }
  Fields f(path.string(), root);
  ArchParams p;
  p.arch = parse_arch(f.text("arch"), f.file());
  p.name = f.text("arch");
  p.soc_descriptor_file = f.text("soc_descriptor");
  p.clock_hz = f.integer("clock_hz", 1);
  // Programs the host enqueues launch on the clock's grid, the span after which its edges fall
  // on the same picosecond again (sim/engine/cycle_counter.hpp, docs/sim_device.md "Dispatch"):
  // a clock whose edges recur only every millisecond would hold every op back by up to that.
  if (const SimTime grid = cycle_grid_period(p.clock_hz); grid > kLongestClockGrid) {
    throw ModelConfigError(fmt::format("{}: field 'clock_hz' = {}: its cycle edges fall on the same picosecond only "
                                       "every {} ps; expected a clock whose edges recur within {} ps (any multiple "
                                       "of 10 MHz does)",
                                       f.file(), p.clock_hz, grid.ps(), kLongestClockGrid.ps()));
  }

  NocParams& noc = p.noc;
  noc.flit_bytes = f.integer("noc.flit_bytes", 1);
  noc.max_packet_payload_bytes = static_cast<std::uint32_t>(f.integer("noc.max_packet_payload_bytes", 1));
  noc.link_rate = f.milli_per_cycle("noc.link_milli_bytes_per_cycle", p.clock_hz);
  noc.multicast_rate = f.milli_per_cycle("noc.multicast_milli_bytes_per_cycle", p.clock_hz);
  noc.tensix_niu = niu(f, "tensix", p.clock_hz);
  noc.eth_niu = niu(f, "eth", p.clock_hz);
  noc.dram_niu = niu(f, "dram", p.clock_hz);
  noc.request_slots = static_cast<std::int32_t>(f.integer("noc.request_slots", 1));
  noc.router_hop = p.cycles(f.integer("noc.router_hop_cycles", 0));
  noc.niu_to_router = p.cycles(f.integer("noc.niu_to_router_cycles", 0));
  noc.router_to_niu = p.cycles(f.integer("noc.router_to_niu_cycles", 0));
  noc.request_setup = p.cycles(f.integer("noc.request_setup_cycles", 0));
  noc.request_issue = p.cycles(f.integer("noc.request_issue_cycles", 0));

  p.l1.tensix_bytes = static_cast<std::uint64_t>(f.integer("l1.tensix_bytes", 1));
  p.l1.erisc_bytes = static_cast<std::uint64_t>(f.integer("l1.erisc_bytes", 1));

  p.dram.channels = static_cast<std::int32_t>(f.integer("dram.channels", 1));
  p.dram.channel_bytes = static_cast<std::uint64_t>(f.integer("dram.channel_bytes", 1));
  p.dram.banks_per_channel = static_cast<std::int32_t>(f.integer("dram.banks_per_channel", 1));
  if (p.dram.channel_bytes % static_cast<std::uint64_t>(p.dram.banks_per_channel) != 0) {
    throw ModelConfigError(fmt::format("{}: dram.channel_bytes {} is not divisible by banks_per_channel {}", f.file(),
                                       p.dram.channel_bytes, p.dram.banks_per_channel));
  }
  p.dram.channel_rate = Bandwidth::bytes_per_second(f.integer("dram.channel_bytes_per_second", 1));
  p.dram.access_latency = p.cycles(f.integer("dram.access_latency_cycles", 0));

  EthParams& eth = p.eth;
  eth.line_rate = Bandwidth::bytes_per_second(f.integer("eth.line_rate_bytes_per_second", 1));
  eth.max_frame_bytes = static_cast<std::uint32_t>(f.integer("eth.max_frame_bytes", 1));
  eth.frame_overhead_bytes = static_cast<std::uint32_t>(f.integer("eth.frame_overhead_bytes", 0));
  eth.packet_header_bytes = static_cast<std::uint32_t>(f.integer("eth.packet_header_bytes", 0));
  eth.word_bytes = static_cast<std::uint32_t>(f.integer("eth.word_bytes", 1));
  eth.tx_issue = p.cycles(f.integer("eth.tx_issue_cycles", 0));
  eth.rx_handle = p.cycles(f.integer("eth.rx_handle_cycles", 0));
  eth.one_way_latency = SimTime::from_ps(f.integer("eth.one_way_latency_ps", 0));
  eth.txq_max_outstanding = static_cast<std::int32_t>(f.integer("eth.txq_max_outstanding", 1));
  return p;
}

std::shared_ptr<const ArchSpec> load_arch_spec(const std::filesystem::path& arch_file,
                                               const std::filesystem::path& soc_descriptor_dir) {
  auto spec = std::make_shared<ArchSpec>();
  spec->params = load_arch_params(arch_file);
  const std::filesystem::path soc_file = soc_descriptor_dir / spec->params.soc_descriptor_file;
  spec->soc = load_soc_descriptor(soc_file);
  const ArchParams& p = spec->params;
  const SocDescriptor& soc = spec->soc;
  auto mismatch = [&](const char* what, std::uint64_t arch_value, std::uint64_t soc_value) {
    if (arch_value != soc_value) {
      throw ModelConfigError(fmt::format("{} says {} = {}, but its SoC descriptor {} says {}", arch_file.string(), what,
                                         arch_value, soc_file.string(), soc_value));
    }
  };
  mismatch("l1.tensix_bytes", p.l1.tensix_bytes, soc.worker_l1_bytes);
  mismatch("l1.erisc_bytes", p.l1.erisc_bytes, soc.eth_l1_bytes);
  mismatch("dram.channels", static_cast<std::uint64_t>(p.dram.channels), soc.dram.size());
  mismatch("dram.channel_bytes", p.dram.channel_bytes, soc.dram_channel_bytes);
  return spec;
}

std::filesystem::path builtin_arch_file(ChipArch arch) {
  return topo::arch_dir() / (std::string(to_string(arch)) + ".yaml");
}

std::filesystem::path builtin_soc_descriptor_dir() { return topo::shared_dir() / "ecosystem" / "soc_descriptors"; }

std::shared_ptr<const ArchSpec> builtin_arch_spec(ChipArch arch) {
  static std::mutex mutex;
  static std::map<ChipArch, std::shared_ptr<const ArchSpec>> cache;
  std::lock_guard lock(mutex);
  auto it = cache.find(arch);
  if (it != cache.end()) return it->second;
  auto spec = load_arch_spec(builtin_arch_file(arch), builtin_soc_descriptor_dir());
  cache.emplace(arch, spec);
  return spec;
}

}  // namespace cclmesh::sim
