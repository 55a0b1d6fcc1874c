#include "runtime/remote/served_requests.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "runtime/device/host_copy_check.hpp"
#include "runtime/device/profile_range.hpp"
#include "runtime/remote/frame_connection.hpp"
#include "runtime/remote/host_bytes_limit.hpp"
#include "topologies/topology_yaml.hpp"

namespace cclmesh::runtime::remote {

namespace {

Json ok(Json fields = Json::object()) {
  fields["type"] = reply::kOk;
  return fields;
}

}  // namespace

ServedRequests::ServedRequests(MeshDevice& device, const RemoteServerOptions& options)
    : device_(device), options_(options) {}

Json ServedRequests::hello(const std::vector<std::uint8_t>& header) const {
  const Json hello = from_wire(header);
  const std::string type = string_field(hello, "type", "hello");
  if (type != request::kHello) throw ProtocolError(fmt::format("the first request is '{}', not hello", type));
  const std::string protocol = string_field(hello, "protocol", "hello");
  const auto version = unsigned_field<std::uint32_t>(hello, "version", "hello");
  if (protocol != kProtocolName || version != kProtocolVersion) {
    throw ProtocolError(fmt::format("the client speaks {} version {}, this server {} version {}", protocol, version,
                                    kProtocolName, kProtocolVersion));
  }
  return ok(Json{{"protocol", kProtocolName},
                 {"version", kProtocolVersion},
                 {"device", options_.description},
                 {"system", options_.system_name.empty() ? device_.topology().name() : options_.system_name},
                 {"data_mode", data_mode_name(options_.data_mode)},
                 {"hardware", hardware_name(options_.hardware)},
                 {"fabric", encode(device_.fabric())},
                 {"faults", options_.faults},
                 // The bound on one host write or read, so that a client refuses one past it
                 // itself, before sending its bytes or running an op whose result it cannot read.
                 {"max_host_bytes", options_.max_enqueued_host_bytes},
                 // How long it waits for a request between calls (0: forever), so that a client
                 // whose session it ends for idling can say so rather than "broken pipe".
                 {"idle_timeout_ms", options_.idle_timeout.count()}});
}

std::optional<std::string> ServedRequests::reset_if_left_unusable() {
  if (!device_failed_ && !work_unfinished_) return std::nullopt;
  const std::string why = device_failed_ ? "the device failed in that session" : "that session left work unfinished";
  try {
    device_.reset();
    buffers_.clear();
    semaphores_.clear();
    forget_enqueued();
    device_failed_ = false;
    work_unfinished_ = false;
    return fmt::format("device reset ({}): the next client gets it as just opened", why);
  } catch (const std::exception& e) {
    // The next client meets the device as it is, and may reset it itself.
    return fmt::format("device reset ({}) failed: {}", why, e.what());
  }
}

std::optional<std::string> ServedRequests::free_what_a_lost_session_left() {
  if (device_failed_ || work_unfinished_) return std::nullopt;
  const std::uint64_t session = sessions_begun_;
  const std::vector<BufferHandle> buffers = buffers_.given_in(session);
  const std::vector<GlobalSemaphore> semaphores = semaphores_.given_in(session);
  if (buffers.empty() && semaphores.empty()) return std::nullopt;
  try {
    for (const BufferHandle& buffer : buffers) {
      device_.deallocate_buffer(buffer);
      buffers_.freed(buffer.id);
    }
    for (const GlobalSemaphore& semaphore : semaphores) {
      device_.deallocate_global_semaphore(semaphore);
      semaphores_.freed(semaphore.id);
    }
  } catch (const std::exception& e) {
    return fmt::format("freeing what session {} left failed: {}", session, e.what());
  }
  return fmt::format("freed the {} buffer{} and {} global semaphore{} session {} left (its client went without a "
                     "goodbye)",
                     buffers.size(), buffers.size() == 1 ? "" : "s", semaphores.size(),
                     semaphores.size() == 1 ? "" : "s", session);
}

void ServedRequests::require_room_for_enqueued(std::uint64_t bytes, std::string_view call) const {
  if (enqueued_host_bytes_ + bytes > options_.max_enqueued_host_bytes) {
    throw std::invalid_argument(
        enqueued_host_bytes_refusal(call, bytes, options_.max_enqueued_host_bytes, enqueued_host_bytes_));
  }
}

void ServedRequests::require_within_host_limit(std::uint64_t bytes, std::string_view call) const {
  if (bytes > options_.max_enqueued_host_bytes) {
    throw HostBytesLimitError(host_bytes_limit_refusal(call, bytes, options_.max_enqueued_host_bytes));
  }
}

void ServedRequests::require_host_memory_for(const BufferConfig& config) const {
  const std::uint64_t limit = options_.max_buffer_host_bytes;
  if (limit == 0 || options_.data_mode != ServedDataMode::Functional) return;
  const std::uint64_t chips = device_.chips().size();
  const std::uint64_t held = buffers_.total([chips](const BufferHandle& b) { return b.config.size_bytes * chips; });
  // Compared without forming size x chips first: a client's size may be any 64-bit value.
  const bool fits = held <= limit && (chips == 0 || config.size_bytes <= (limit - held) / chips);
  if (!fits) throw std::invalid_argument(host_memory_limit_refusal(config.size_bytes, chips, held, limit));
}

std::size_t ServedRequests::session_profile_size() const {
  const std::size_t size = device_.profile_size();
  // Always on (no sim/ include here for CCLMESH_CHECK): a backend whose profile shrank without a
  // reset broke MeshDevice's contract, and a wrapped-round count would hand out others' entries.
  if (size < profile_origin_) {
    throw std::logic_error(fmt::format("the served device's profile has {} entries, fewer than the {} it had when "
                                       "this session began or reset it, with no reset since",
                                       size, profile_origin_));
  }
  return size - profile_origin_;
}

void ServedRequests::bound_session_profile() {
  if (!options_.forget_profile_before) return;
  const std::size_t size = session_profile_size();
  if (size - session_profile_dropped_ <= options_.max_profile_entries) return;
  session_profile_dropped_ = size - options_.max_profile_entries;
  options_.forget_profile_before(profile_origin_ + session_profile_dropped_);
}

void ServedRequests::forget_enqueued() {
  staged_reads_.clear();
  enqueued_host_bytes_ = 0;
}

void ServedRequests::check_blob(const std::vector<std::uint8_t>& header, std::uint64_t bytes, bool greeted) const {
  if (bytes == 0) return;
  Json request;
  std::string type;
  try {
    request = from_wire(header);
    type = string_field(request, "type", "request");
  } catch (const ProtocolError& e) {
    throw FrameTooLarge(fmt::format("a frame's data length is {} B but its request does not decode ({}); limit 0 B",
                                    bytes, e.what()));
  }
  if (type != request::kWriteBuffer && type != request::kEnqueueWriteBuffer) {
    throw FrameTooLarge(fmt::format("{} request's data length is {} B; it carries no data (limit 0 B)", type, bytes));
  }
  if (!greeted) {
    throw FrameTooLarge(fmt::format("{} request's data length is {} B; a session's first request is its hello, which "
                                    "carries no data (limit 0 B)",
                                    type, bytes));
  }
  BufferHandle claimed;
  try {
    claimed = decode_buffer_handle(field(request, "buffer", type), type + ".buffer");
  } catch (const ProtocolError& e) {
    throw FrameTooLarge(fmt::format("{} request's data length is {} B, but {} (limit 0 B)", type, bytes, e.what()));
  }
  // Refused as the device would refuse it, the session going on, where reading the bytes past
  // costs no more than a write the server would make, or kMaxRefusedWriteBytes.
  const BufferHandle* buffer = nullptr;
  try {
    buffer = &buffers_.served(claimed, type);
  } catch (const std::invalid_argument& e) {
    if (bytes <= kMaxRefusedWriteBytes) throw BlobRefused(e.what());
    throw FrameTooLarge(fmt::format("{} request's data length is {} B, but {} (limit {} B, what this server reads "
                                    "to refuse a write)",
                                    type, bytes, e.what(), kMaxRefusedWriteBytes));
  }
  try {
    runtime::require_whole_buffer(type, *buffer, bytes);
    require_within_host_limit(bytes, type);
  } catch (const std::invalid_argument& e) {
    const std::uint64_t limit = std::max(buffer->config.size_bytes, kMaxRefusedWriteBytes);
    if (bytes <= limit) throw BlobRefused(e.what());
    throw FrameTooLarge(fmt::format("{} request's data length is {} B, above the limit of {} B (the larger of "
                                    "buffer {}'s size per chip, {} B, and what this server reads to refuse a write)",
                                    type, bytes, limit, buffer->id, buffer->config.size_bytes));
  }
}

Json ServedRequests::handle(const Json& request, std::vector<std::byte>& blob, std::vector<std::byte>& reply_blob) {
  const std::string type = request.at("type").get<std::string>();
  const std::string path = type;
  try {
    // Before each request rather than after the call that ran kernels (finish(), a blocking
    // read that runs the device): whatever the client asks next sees the bounded profile, and
    // the server holds at most one call's entries past the bound.
    bound_session_profile();
    if (type == request::kTopology) return ok(Json{{"yaml", topo::to_yaml(device_.topology())}});
    if (type == request::kChips) return ok(Json{{"chips", device_.chips()}});
    if (type == request::kWorkerGrid) return ok(Json{{"grid", encode(device_.worker_grid())}});
    if (type == request::kActiveEthernetChannels) {
      return ok(Json{{"channels", device_.active_ethernet_channels(unsigned_field<ChipId>(request, "chip", path))}});
    }
    if (type == request::kCreateBuffer) {
      const BufferConfig config = decode_buffer_config(field(request, "config", path), path + ".config");
      const BufferHandle buffer = device_.create_buffer(config);  // a config it refuses, refused as such
      try {
        require_host_memory_for(config);
      } catch (const std::invalid_argument&) {
        device_.deallocate_buffer(buffer);
        throw;
      }
      buffers_.given(buffer, sessions_begun_);
      return ok(Json{{"buffer", encode(buffer)}});
    }
    if (type == request::kDeallocateBuffer) {
      // The device tells a freed or unknown handle from a live one; the server then forgets it.
      const BufferHandle buffer = decode_buffer_handle(field(request, "buffer", path), path + ".buffer");
      device_.deallocate_buffer(buffer);
      buffers_.freed(buffer.id);
      return ok();
    }
    // A host write's or read's chip and buffer (the server's own copy of the handle), and a
    // read's size, bounded by the buffer's before anything is allocated for it.
    const auto io_chip = [&] { return unsigned_field<ChipId>(request, "chip", path); };
    const auto io_buffer = [&]() -> const BufferHandle& {
      return buffers_.served(decode_buffer_handle(field(request, "buffer", path), path + ".buffer"), path);
    };
    const auto read_size = [&](const BufferHandle& buffer) {
      return static_cast<std::size_t>(
          unsigned_value(field(request, "size_bytes", path), buffer.config.size_bytes, path + ".size_bytes"));
    };
    if (type == request::kWriteBuffer) {
      const auto chip = io_chip();
      device_.write_buffer(chip, io_buffer(), blob);
      return ok();
    }
    if (type == request::kReadBuffer) {
      const auto chip = io_chip();
      const BufferHandle& buffer = io_buffer();
      const std::size_t size = read_size(buffer);
      require_within_host_limit(size, path);
      reply_blob.resize(size);
      device_.read_buffer(chip, buffer, reply_blob);
      return ok();
    }
    if (type == request::kEnqueueWriteBuffer) {
      const auto chip = io_chip();
      const BufferHandle& buffer = io_buffer();
      require_within_host_limit(blob.size(), path);
      require_room_for_enqueued(blob.size(), path);
      device_.enqueue_write_buffer(chip, buffer, blob);  // copies the bytes
      enqueued_host_bytes_ += blob.size();
      work_unfinished_ = true;
      return ok();
    }
    if (type == request::kEnqueueReadBuffer) {
      const auto chip = io_chip();
      const BufferHandle& buffer = io_buffer();
      const std::size_t size = read_size(buffer);
      require_within_host_limit(size, path);
      require_room_for_enqueued(size, path);
      StagedRead& staged = staged_reads_.emplace_back(StagedRead{sessions_begun_, std::vector<std::byte>(size)});
      try {
        device_.enqueue_read_buffer(chip, buffer, staged.bytes);
      } catch (...) {
        staged_reads_.pop_back();  // refused: the device holds no span of it
        throw;
      }
      enqueued_host_bytes_ += size;
      work_unfinished_ = true;
      return ok();
    }
    if (type == request::kCreateGlobalSemaphore) {
      const std::vector<CoreRange> cores = decode_core_ranges(array_field(request, "cores", path), path + ".cores");
      const CoreKind kind = decode_core_kind(field(request, "core_kind", path), path + ".core_kind");
      const auto initial = unsigned_field<std::uint32_t>(request, "initial_value", path);
      const GlobalSemaphore semaphore = device_.create_global_semaphore(cores, kind, initial);
      semaphores_.given(semaphore, sessions_begun_);
      return ok(Json{{"semaphore", encode(semaphore)}});
    }
    if (type == request::kResetGlobalSemaphore) {
      const GlobalSemaphore& semaphore = semaphores_.served(
          decode_global_semaphore(field(request, "semaphore", path), path + ".semaphore"), path);
      device_.reset_global_semaphore(semaphore, unsigned_field<std::uint32_t>(request, "value", path));
      work_unfinished_ = true;  // enqueue-ordered: a host command until the next finish()
      return ok();
    }
    if (type == request::kDeallocateGlobalSemaphore) {
      // As for buffers: the device tells a freed or unknown handle from a live one.
      const GlobalSemaphore semaphore =
          decode_global_semaphore(field(request, "semaphore", path), path + ".semaphore");
      device_.deallocate_global_semaphore(semaphore);
      semaphores_.freed(semaphore.id);
      return ok();
    }
    if (type == request::kEnqueueWorkloads) {
      // Every workload decoded before the device sees any: one that does not decode enqueues
      // nothing, as one the device refuses.
      const Json& list = array_field(request, "workloads", path);
      std::vector<MeshWorkload> workloads;
      workloads.reserve(list.size());
      for (std::size_t i = 0; i < list.size(); ++i) {
        workloads.push_back(decode_workload(list[i], fmt::format("{}.workloads[{}]", path, i)));
      }
      device_.enqueue_workloads(workloads);
      if (!workloads.empty()) work_unfinished_ = true;  // an empty list leaves nothing to run
      return ok();
    }
    if (type == request::kFinish) {
      try {
        device_.finish();
      } catch (...) {
        // None of the reads is delivered (the client drops them too); their bytes stay, in case
        // the device still writes them, until a finish that completes or a reset.
        for (StagedRead& staged : staged_reads_) staged.session = 0;
        throw;
      }
      work_unfinished_ = false;
      // The reads this session enqueued since its last finish, back to back in enqueue order.
      for (const StagedRead& staged : staged_reads_) {
        if (staged.session != sessions_begun_) continue;
        reply_blob.insert(reply_blob.end(), staged.bytes.begin(), staged.bytes.end());
      }
      forget_enqueued();
      return ok();
    }
    if (type == request::kReset) {
      // The handles given before name nothing now (the device may give their ids again).
      buffers_.clear();
      semaphores_.clear();
      device_.reset();
      forget_enqueued();
      device_failed_ = false;
      work_unfinished_ = false;
      profile_origin_ = 0;  // the reset emptied the profile
      session_profile_dropped_ = 0;
      return ok();
    }
    if (type == request::kProfileSize) return ok(Json{{"size", session_profile_size()}});
    if (type == request::kProfile) {
      // Checked in the session's numbering, so that the refusal names the client's figures.
      const auto first_entry = unsigned_field<std::size_t>(request, "first_entry", path);
      require_profile_entry(first_entry, session_profile_size());
      if (first_entry < session_profile_dropped_) {
        throw ProfileEntriesDroppedError(fmt::format(
            "profile_since: entry {} was dropped: this server keeps the last {} kernel profile entries of a session "
            "(serve --max-profile-entries), and this session's entries 0 .. {} of {} are gone; read an op's entries "
            "right after it finishes, or serve with a larger --max-profile-entries",
            first_entry, options_.max_profile_entries, session_profile_dropped_ - 1, session_profile_size()));
      }
      Json profile = Json::array();
      for (const KernelProfile& p : device_.profile_since(profile_origin_ + first_entry)) profile.push_back(encode(p));
      return ok(Json{{"profile", std::move(profile)}});
    }
    if (type == request::kLinkTraffic) {
      // null: the backend does not measure its links (the client then says so, not zeros).
      const std::optional<std::vector<LinkTraffic>> traffic = device_.link_traffic();
      if (!traffic) return ok(Json{{"links", nullptr}});
      Json links = Json::array();
      for (const LinkTraffic& t : *traffic) links.push_back(encode(t));
      return ok(Json{{"links", std::move(links)}});
    }
    if (type == request::kDeviceTime) {
      return ok(Json{{"time_ps", options_.device_time_ps ? Json(options_.device_time_ps()) : Json(nullptr)}});
    }
    if (type == request::kDeviceEvents) {
      return ok(Json{{"events", options_.device_events ? Json(options_.device_events()) : Json(nullptr)}});
    }
    if (type == request::kFaultEffects) {
      return ok(Json{{"effects", options_.fault_effects ? Json(options_.fault_effects()) : Json::array()}});
    }
    if (type == request::kHello) throw ProtocolError("hello sent twice in one session");
    throw ProtocolError(fmt::format("unknown request type '{}'", type));
  } catch (const DeviceError&) {
    device_failed_ = true;
    reply_blob.clear();
    return error_reply(std::current_exception());
  } catch (...) {
    reply_blob.clear();
    return error_reply(std::current_exception());
  }
}

}  // namespace cclmesh::runtime::remote
