// The CCL command interpreter (REFERENCE §4.7, §4.8): runs one or two command streams round
// robin on a data-movement core. Each pass gives every unfinished stream one attempt: a stream
// without a command fetches, decodes and validates its next one; a stream with a command tries
// to advance it without blocking on anything another stream could be needed to provide (CB
// space, CB data, a semaphore value). Once the attempt has started it blocks like tt-metal's
// kernel does (NoC barriers, fabric slots). A pass without progress parks the kernel in
// wait_for_l1_activity(). When only one stream is left its waits block directly, so a hang
// report names the CB or semaphore.
//
// Argument layout: kernel_args.hpp (namespace interpreter). Planning helpers:
// interpreter/command_plan.hpp. Malformed input ends in kernel_fault().

#include <cstdint>

#include "kernels/api/dataflow_api.hpp"
#include "kernels/api/fabric_connection.hpp"
#include "kernels/api/fabric_packet_header.hpp"
#include "kernels/interpreter/command_plan.hpp"
#include "kernels/interpreter/interpreter_args.hpp"
#include "kernels/kernel_args.hpp"
#include "kernels/kernels.hpp"

namespace cclmesh::kernels {
namespace {

using api::CommandCode;
using api::DestinationType;
using api::KernelFaultCode;
using api::PacketHeader;
using api::WorkerToFabricEdmSender;

// Fabric packet headers are built on the stack and NoC-written from L1 slots of this pool;
// before a slot is reused, every header written from the pool has left the core.
class PacketHeaderPool {
 public:
  PacketHeaderPool(uint32_t base_address, uint8_t noc) : base_(base_address), noc_(noc) {}

  uint32_t stage(const PacketHeader& header) {
    if (next_ == interpreter::kInterpreterPacketHeaderSlots) {
      noc_async_writes_flushed(noc_);
      next_ = 0;
    }
    const uint32_t address = base_ + next_ * api::kPacketHeaderSizeBytes;
    next_ += 1;
    l1_write_bytes(address, &header, api::kPacketHeaderSizeBytes);
    return address;
  }

 private:
  uint32_t base_;
  uint8_t noc_;
  uint32_t next_ = 0;
};

struct Stream {
  uint32_t index;
  const InterpreterStream* args;
  api::CommandStreamReader reader{nullptr, 0};
  uint32_t commands_left;
  bool active;
  bool done;
  CommandContext ctx;
  CommandPlan plan;
  // The active command, resolved.
  api::SliceWalker walker;
  uint32_t cb_id;
  uint32_t cb_page_size;
  uint32_t semaphore_address;  // local L1 (wait, set, flow control) or on the target core
  uint32_t core_x;             // target core, NoC0
  uint32_t core_y;
  uint32_t burst_group_word;
  uint32_t burst_transfers_left;
  uint32_t max_packet_payload;  // smallest payload of the connections the command sends on
};

class Interpreter {
 public:
  Interpreter(const InterpreterArgs& args, const uint32_t* arg_words, uint32_t header_cb_id, uint8_t noc)
      : args_(args), arg_words_(arg_words), noc_(noc), headers_(get_write_ptr(header_cb_id), noc) {}

  void run() {
    open_connections();
    // The op's data path is up once its fabric connections are open (REFERENCE 1.8's per-call
    // cost); a stream without connections is ready at its start.
    profile_mark_ready();
    for (uint32_t s = 0; s < args_.num_streams; ++s) {
      Stream& st = streams_[s];
      st = Stream{};
      st.index = s;
      st.args = &args_.streams[s];
      st.reader = api::CommandStreamReader(arg_words_ + st.args->commands_offset, st.args->commands_words);
      st.commands_left = st.args->num_commands;
    }
    for (;;) {
      bool progress = false;
      uint32_t unfinished = 0;
      for (uint32_t s = 0; s < args_.num_streams; ++s) {
        Stream& st = streams_[s];
        if (!st.done) {
          progress |= step(st);
        }
        unfinished += st.done ? 0 : 1;
      }
      if (unfinished == 0) {
        break;
      }
      if (!progress) {
        wait_for_l1_activity();
      }
    }
    close_connections();
    noc_async_write_barrier(noc_);
  }

 private:
  // ---- Set-up and teardown ------------------------------------------------------------------
  void open_connections() {
    if (args_.forward_connection_offset != 0) {
      uint32_t at = args_.forward_connection_offset;
      forward_ = WorkerToFabricEdmSender::build_from_args(at, noc_);
      forward_.open_start();
    }
    if (args_.backward_connection_offset != 0) {
      uint32_t at = args_.backward_connection_offset;
      backward_ = WorkerToFabricEdmSender::build_from_args(at, noc_);
      backward_.open_start();
    }
    if (forward_.is_valid()) {
      forward_.open_finish();
    }
    if (backward_.is_valid()) {
      backward_.open_finish();
    }
  }

  void close_connections() {
    if (forward_.is_valid()) {
      forward_.close_start();
    }
    if (backward_.is_valid()) {
      backward_.close_start();
    }
    if (forward_.is_valid()) {
      forward_.close_finish();
    }
    if (backward_.is_valid()) {
      backward_.close_finish();
    }
  }

  // ---- Faults --------------------------------------------------------------------------------
  [[noreturn]] void fail(const Stream& st, FaultCode code, uint32_t word_in_stream) const {
    kernel_fault(code, st.plan.index, st.args->commands_offset + word_in_stream);
  }
  [[noreturn]] void fail_command(const Stream& st, FaultCode code) const { fail(st, code, st.plan.word_offset); }

  // Only this stream is unfinished, so its waits may block.
  bool may_block(const Stream& st) const {
    for (uint32_t s = 0; s < args_.num_streams; ++s) {
      if (s != st.index && !streams_[s].done) {
        return false;
      }
    }
    return true;
  }

  // ---- Fetch ---------------------------------------------------------------------------------
  bool step(Stream& st) {
    if (!st.active) {
      fetch(st);
      return true;
    }
    // The streams take turns: say which command this attempt belongs to, so a fault or a hang
    // inside it names the right one.
    debug_set_current_command(st.index, st.plan.index, st.args->commands_offset + st.plan.word_offset);
    return attempt(st);
  }

  void fetch(Stream& st) {
    if (st.commands_left == 0) {
      st.done = true;
      return;
    }
    const FaultCode decode = read_command(st.reader, st.ctx, st.plan);
    if (decode != kNoFault) {
      fail(st, decode, st.reader.position());
    }
    debug_set_current_command(st.index, st.plan.index, st.args->commands_offset + st.plan.word_offset);
    const InterpreterEnv env{st.args->tensor.present, args_.semaphore_id_mask, forward_.is_valid(),
                             backward_.is_valid()};
    const FaultCode invalid = validate_command(st.plan, st.ctx, env);
    if (invalid != kNoFault) {
      fail_command(st, invalid);
    }
    st.commands_left -= 1;
    prepare(st);
    st.active = true;
  }

  uint32_t semaphore_address(const OperandInfo& op) const {
    return op.type == api::AddressType::SEMAPHORE_ID ? get_semaphore(op.value) : op.value;
  }

  void use_cb(Stream& st, uint32_t cb_id) {
    st.cb_id = cb_id;
    st.cb_page_size = get_cb_page_size(cb_id);
  }

  // The payload every packet of this command must fit: the smallest of the connections it
  // sends on (0xFFFFFFFF for a local-only command).
  uint32_t packet_payload_limit(const Stream& st) const {
    const api::CommandHeader& h = st.plan.header;
    uint32_t limit = 0xFFFFFFFFu;
    if (h.code == CommandCode::STREAM_TENSOR_TO_CB || h.code == CommandCode::NOC_READ_BURST ||
        h.code == CommandCode::FLOW_CONTROLLED_NOC_READ_BURST) {
      return limit;  // reads: the destination type only reserved header room in tt-metal
    }
    const auto use = [&limit](const WorkerToFabricEdmSender& c) {
      limit = c.max_payload_bytes() < limit ? c.max_payload_bytes() : limit;
    };
    if (h.dest_type == DestinationType::CHIP_UNICAST) {
      use(h.is_forward_direction != 0 ? forward_ : backward_);
    } else if (h.dest_type == DestinationType::CHIP_MULTICAST) {
      if (h.num_targets_forward > 0) {
        use(forward_);
      }
      if (h.num_targets_backward > 0) {
        use(backward_);
      }
    }
    return limit;
  }

  void prepare(Stream& st) {
    const CommandPlan& p = st.plan;
    st.max_packet_payload = packet_payload_limit(st);
    st.core_x = my_x(0);
    st.core_y = my_y(0);
    if (p.core.present && p.core.type == api::CoreDescriptorType::NOC_XY) {
      st.core_x = p.core.noc_x;
      st.core_y = p.core.noc_y;
    }
    switch (p.header.code) {
      case CommandCode::STREAM_TENSOR_TO_CB:
      case CommandCode::STREAM_CB_TO_TENSOR:
        use_cb(st, p.header.code == CommandCode::STREAM_TENSOR_TO_CB ? p.dst.value : p.src.value);
        if (st.cb_page_size < st.args->tensor.page_size_bytes) {
          fail_command(st, fault(KernelFaultCode::CB_PAGE_SIZE_MISMATCH));
        }
        if (st.args->tensor.page_size_bytes > st.max_packet_payload) {
          fail_command(st, fault(KernelFaultCode::PAYLOAD_TOO_LARGE));
        }
        st.walker = api::make_slice_walker(st.ctx.tensor);
        break;
      case CommandCode::WAIT_VALUE:
        st.semaphore_address = semaphore_address(p.src);
        break;
      case CommandCode::SET_SEMAPHORE_VALUE:
      case CommandCode::ATOMIC_INC:
      case CommandCode::RAW_INLINE_WRITE_BYTES:
        st.semaphore_address = semaphore_address(p.dst);
        break;
      case CommandCode::NOC_READ_BURST:
      case CommandCode::FLOW_CONTROLLED_NOC_READ_BURST:
      case CommandCode::NOC_WRITE_BURST:
      case CommandCode::NOC_WRITE_AND_ATOMIC_INC:
        prepare_burst(st);
        break;
      default:
        fail_command(st, fault(KernelFaultCode::UNSUPPORTED_COMMAND));
    }
  }

  void prepare_burst(Stream& st) {
    const CommandPlan& p = st.plan;
    const bool reads = p.header.code == CommandCode::NOC_READ_BURST ||
                       p.header.code == CommandCode::FLOW_CONTROLLED_NOC_READ_BURST;
    use_cb(st, reads ? p.dst.value : p.src.value);
    if (p.header.code == CommandCode::FLOW_CONTROLLED_NOC_READ_BURST) {
      st.semaphore_address = semaphore_address(p.src);
    } else if (p.header.code == CommandCode::NOC_WRITE_AND_ATOMIC_INC) {
      st.semaphore_address = semaphore_address(p.dst);
    }
    const uint32_t* words = st.reader.words();
    const uint64_t packet_bytes = uint64_t{args_.packet_size_in_pages} * st.cb_page_size;
    if (burst_max_group_bytes(words, p.burst) > packet_bytes ||
        (!reads && burst_max_transfer_bytes(words, p.burst) > st.max_packet_payload)) {
      fail_command(st, fault(KernelFaultCode::PAYLOAD_TOO_LARGE));
    }
    st.burst_group_word = p.burst.first_group_word;
    st.burst_transfers_left = p.burst.total_transfers;
  }

  // ---- Attempts ------------------------------------------------------------------------------
  bool complete(Stream& st) {
    debug_command_done(st.index, st.plan.index);
    st.active = false;
    return true;
  }

  bool attempt(Stream& st) {
    switch (st.plan.header.code) {
      case CommandCode::STREAM_TENSOR_TO_CB:
        return stream_tensor_to_cb(st);
      case CommandCode::STREAM_CB_TO_TENSOR:
        return stream_cb_to_tensor(st);
      case CommandCode::WAIT_VALUE:
        return wait_value(st);
      case CommandCode::SET_SEMAPHORE_VALUE:
        noc_semaphore_set(api::l1_word_ptr(st.semaphore_address), st.plan.target);
        return complete(st);
      case CommandCode::ATOMIC_INC:
        atomic_inc(st);
        return complete(st);
      case CommandCode::RAW_INLINE_WRITE_BYTES:
        inline_write(st);
        return complete(st);
      case CommandCode::NOC_READ_BURST:
      case CommandCode::FLOW_CONTROLLED_NOC_READ_BURST:
        return read_burst_group(st);
      case CommandCode::NOC_WRITE_BURST:
      case CommandCode::NOC_WRITE_AND_ATOMIC_INC:
        return write_burst_group(st);
      default:
        fail_command(st, fault(KernelFaultCode::UNSUPPORTED_COMMAND));
    }
  }

  bool cb_space(Stream& st) {
    const int32_t pages = static_cast<int32_t>(args_.packet_size_in_pages);
    if (!may_block(st) && !cb_pages_reservable_at_back(static_cast<int32_t>(st.cb_id), pages)) {
      return false;
    }
    cb_reserve_back(static_cast<int32_t>(st.cb_id), pages);
    return true;
  }

  bool cb_data(Stream& st) {
    const int32_t pages = static_cast<int32_t>(args_.packet_size_in_pages);
    if (!may_block(st) && !cb_pages_available_at_front(static_cast<int32_t>(st.cb_id), pages)) {
      return false;
    }
    cb_wait_front(static_cast<int32_t>(st.cb_id), pages);
    return true;
  }

  bool semaphore_reached(Stream& st) {
    if (may_block(st)) {
      noc_semaphore_wait_min(api::l1_word_ptr(st.semaphore_address), st.plan.target);
      return true;
    }
    return l1_read_u32(st.semaphore_address) >= st.plan.target;
  }

  bool wait_value(Stream& st) { return semaphore_reached(st) ? complete(st) : false; }

  // Largest run one NoC transfer (or fabric packet) may carry: pages are contiguous in the
  // tensor's memory at the address generator's stride and in the CB at the CB's page size;
  // only when both equal the page size is a multi-page run one contiguous block on both
  // sides. A packet also holds at most the connection's payload.
  uint32_t max_run_pages(const Stream& st) const {
    const InterpreterTensor& t = st.args->tensor;
    const bool dense = page_stride_bytes(t.addrgen) == t.page_size_bytes && st.cb_page_size == t.page_size_bytes;
    if (!dense) {
      return 1;
    }
    const uint32_t payload_pages = st.max_packet_payload / t.page_size_bytes;
    return payload_pages < args_.packet_size_in_pages ? payload_pages : args_.packet_size_in_pages;
  }

  uint64_t tensor_page_noc_addr(const Stream& st, const PageRun& run) const {
    const InterpreterTensor& t = st.args->tensor;
    if (t.addrgen.layout == api::TensorMemoryLayout::INTERLEAVED) {
      return get_bank_noc_addr(t.buffer_type == api::BufferType::DRAM, run.target, run.address, noc_);
    }
    if (run.target >= t.addrgen.sharded.number_of_cores) {
      fail_command(st, fault(KernelFaultCode::PAGE_OUTSIDE_SHARD_GRID));
    }
    const uint32_t xy = arg_words_[t.core_table_offset + run.target];
    if (t.buffer_type == api::BufferType::DRAM) {
      // DRAM shards: the table holds each shard's bank id (x), not NoC coordinates.
      return get_bank_noc_addr(true, interpreter::core_xy_x(xy), run.address, noc_);
    }
    return get_noc_addr(interpreter::core_xy_x(xy), interpreter::core_xy_y(xy), run.address, noc_);
  }

  bool stream_tensor_to_cb(Stream& st) {
    if (st.walker.done()) {
      return complete(st);
    }
    if (!cb_space(st)) {
      return false;
    }
    const uint32_t base = get_write_ptr(st.cb_id);
    const uint32_t page_size = st.args->tensor.page_size_bytes;
    const uint32_t max_run = max_run_pages(st);
    uint32_t pages = 0;
    while (pages < args_.packet_size_in_pages && !st.walker.done()) {
      const uint32_t room = args_.packet_size_in_pages - pages;
      const PageRun run =
          next_page_run(st.walker, st.args->tensor.addrgen, page_size, room < max_run ? room : max_run);
      noc_async_read(tensor_page_noc_addr(st, run), base + pages * st.cb_page_size, run.bytes, noc_);
      pages += run.num_pages;
    }
    noc_async_read_barrier(noc_);
    // A whole packet's worth, even for a short tail (REFERENCE §4.11).
    cb_push_back(static_cast<int32_t>(st.cb_id), static_cast<int32_t>(args_.packet_size_in_pages));
    if (st.walker.done()) {
      complete(st);
    }
    return true;
  }

  bool stream_cb_to_tensor(Stream& st) {
    if (st.walker.done()) {
      return complete(st);
    }
    if (!cb_data(st)) {
      return false;
    }
    const uint32_t base = get_read_ptr(st.cb_id);
    const uint32_t page_size = st.args->tensor.page_size_bytes;
    const uint32_t max_run = max_run_pages(st);
    uint32_t pages = 0;
    ScatterBatch batch;
    while (pages < args_.packet_size_in_pages && !st.walker.done()) {
      const uint32_t room = args_.packet_size_in_pages - pages;
      const PageRun run =
          next_page_run(st.walker, st.args->tensor.addrgen, page_size, room < max_run ? room : max_run);
      const uint32_t src = base + pages * st.cb_page_size;
      const uint32_t bytes = run.bytes;
      const uint64_t dst = tensor_page_noc_addr(st, run);
      if (writes_locally(st)) {
        noc_async_write(src, dst, bytes, noc_);
      }
      // Runs that follow each other in the CB share one fabric packet as a scatter write;
      // a run that does not fit sends what is gathered first.
      if (writes_remotely(st)) {
        if (!batch.can_take(src, bytes, st.max_packet_payload)) {
          send_scatter(st, batch);
        }
        batch.add(src, dst, bytes);
      }
      pages += run.num_pages;
    }
    send_scatter(st, batch);
    noc_async_writes_flushed(noc_);
    cb_pop_front(static_cast<int32_t>(st.cb_id), static_cast<int32_t>(args_.packet_size_in_pages));
    if (st.walker.done()) {
      complete(st);
    }
    return true;
  }

  // ---- Writes, local and over the fabric ----------------------------------------------------
  WorkerToFabricEdmSender& connection(bool forward) { return forward ? forward_ : backward_; }

  void send_packet(const Stream& st, WorkerToFabricEdmSender& conn, const PacketHeader& header,
                   uint32_t payload_l1_address, uint32_t payload_bytes) {
    if (payload_bytes > conn.max_payload_bytes()) {
      fail_command(st, fault(KernelFaultCode::PAYLOAD_TOO_LARGE));
    }
    conn.wait_for_empty_write_slot();
    const uint32_t header_address = headers_.stage(header);
    if (payload_bytes > 0) {
      conn.send_packet_header_and_payload_non_blocking(header_address, payload_l1_address, payload_bytes);
    } else {
      conn.send_payload_non_blocking_from_address(header_address, api::kPacketHeaderSizeBytes);
    }
  }

  // Sends `header` (NoC command already set) along the command's chip destination: unicast
  // to one chip, or multicast to the chips in range both ways (start 1). Local delivery for
  // multicast is the caller's.
  void send_fabric(const Stream& st, PacketHeader header, uint32_t payload_l1_address, uint32_t payload_bytes) {
    const api::CommandHeader& h = st.plan.header;
    if (h.dest_type == DestinationType::CHIP_UNICAST) {
      header.to_chip_unicast(h.distance_in_hops);
      send_packet(st, connection(h.is_forward_direction != 0), header, payload_l1_address, payload_bytes);
      return;
    }
    if (h.num_targets_forward > 0) {
      header.to_chip_multicast(1, h.num_targets_forward);
      send_packet(st, forward_, header, payload_l1_address, payload_bytes);
    }
    if (h.num_targets_backward > 0) {
      header.to_chip_multicast(1, h.num_targets_backward);
      send_packet(st, backward_, header, payload_l1_address, payload_bytes);
    }
  }

  // Contiguous runs of a CB packet bound for the same chips, gathered into one fabric packet
  // (REFERENCE §6.6: a scatter write carries at most kNocScatterWriteMaxChunks chunks).
  struct ScatterBatch {
    uint32_t src = 0;
    uint32_t bytes = 0;
    uint8_t chunks = 0;
    uint64_t noc_address[api::kNocScatterWriteMaxChunks] = {};
    uint16_t chunk_size[api::kNocScatterWriteMaxChunks] = {};

    bool can_take(uint32_t run_src, uint32_t run_bytes, uint32_t max_payload) const {
      return chunks == 0 || (chunks < api::kNocScatterWriteMaxChunks && src + bytes == run_src &&
                             bytes + run_bytes <= max_payload);
    }
    void add(uint32_t run_src, uint64_t dst, uint32_t run_bytes) {
      if (chunks == 0) {
        src = run_src;
      }
      noc_address[chunks] = dst;
      chunk_size[chunks] = static_cast<uint16_t>(run_bytes);
      chunks += 1;
      bytes += run_bytes;
    }
  };

  void send_scatter(const Stream& st, ScatterBatch& batch) {
    if (batch.chunks == 0) {
      return;
    }
    PacketHeader header = api::make_packet_header();
    if (batch.chunks == 1) {
      header.to_noc_unicast_write(batch.noc_address[0], static_cast<uint16_t>(batch.bytes));
    } else {
      header.to_noc_unicast_scatter_write(batch.noc_address, batch.chunk_size, batch.chunks);
    }
    send_fabric(st, header, batch.src, batch.bytes);
    batch = ScatterBatch{};
  }

  bool writes_locally(const Stream& st) const { return st.plan.header.dest_type != DestinationType::CHIP_UNICAST; }
  bool writes_remotely(const Stream& st) const {
    return st.plan.header.dest_type != DestinationType::CHIP_LOCAL_ONLY;
  }

  void write_out(const Stream& st, uint32_t src_l1_address, uint64_t dst_noc_addr, uint32_t bytes) {
    if (writes_locally(st)) {
      noc_async_write(src_l1_address, dst_noc_addr, bytes, noc_);
    }
    if (writes_remotely(st)) {
      PacketHeader header = api::make_packet_header();
      header.to_noc_unicast_write(dst_noc_addr, static_cast<uint16_t>(bytes));
      send_fabric(st, header, src_l1_address, bytes);
    }
  }

  // The write, then the semaphore increment once the write has landed.
  void write_out_fused(const Stream& st, uint32_t src_l1_address, uint64_t dst_noc_addr, uint32_t bytes,
                       uint64_t semaphore_noc_addr, uint32_t increment) {
    if (writes_locally(st)) {
      noc_async_write(src_l1_address, dst_noc_addr, bytes, noc_);
      noc_async_write_barrier(noc_);
      noc_semaphore_inc(semaphore_noc_addr, increment, noc_);
    }
    if (writes_remotely(st)) {
      PacketHeader header = api::make_packet_header();
      header.to_noc_fused_unicast_write_atomic_inc(dst_noc_addr, semaphore_noc_addr, static_cast<uint8_t>(increment),
                                                   static_cast<uint16_t>(bytes));
      send_fabric(st, header, src_l1_address, bytes);
    }
  }

  uint64_t target_semaphore_noc_addr(const Stream& st) const {
    return get_noc_addr(st.core_x, st.core_y, st.semaphore_address, noc_);
  }

  void increment(const Stream& st, uint64_t semaphore_noc_addr, uint32_t value) {
    if (writes_locally(st)) {
      noc_semaphore_inc(semaphore_noc_addr, value, noc_);
    }
    if (writes_remotely(st)) {
      PacketHeader header = api::make_packet_header();
      header.to_noc_unicast_atomic_inc(semaphore_noc_addr, static_cast<uint8_t>(value));
      send_fabric(st, header, 0, 0);
    }
  }

  void atomic_inc(const Stream& st) { increment(st, target_semaphore_noc_addr(st), st.plan.inc); }

  void inline_write(const Stream& st) {
    const uint64_t dst = target_semaphore_noc_addr(st);
    if (writes_locally(st)) {
      noc_inline_dw_write(dst, st.plan.target, noc_);
    }
    if (writes_remotely(st)) {
      PacketHeader header = api::make_packet_header();
      header.to_noc_unicast_inline_write(dst, st.plan.target);
      send_fabric(st, header, 0, 0);
    }
  }

  // ---- Bursts: one group per attempt, one CB packet per group --------------------------------
  uint64_t burst_noc_addr(const Stream& st, const api::NocTransferRecord& t) const {
    return get_noc_addr(api::noc_yx_x(t.noc_yx), api::noc_yx_y(t.noc_yx),
                        st.plan.burst.bank_base_address + t.bank_address_offset, noc_);
  }

  void next_group(Stream& st) {
    const uint32_t* words = st.reader.words();
    st.burst_transfers_left -= burst_group_count(words, st.burst_group_word);
    st.burst_group_word += burst_group_words(words, st.burst_group_word);
  }

  bool read_burst_group(Stream& st) {
    if (st.burst_transfers_left == 0) {
      return complete(st);
    }
    if (st.plan.header.code == CommandCode::FLOW_CONTROLLED_NOC_READ_BURST && !semaphore_reached(st)) {
      return false;
    }
    if (!cb_space(st)) {
      return false;
    }
    const uint32_t* words = st.reader.words();
    uint32_t dst = get_write_ptr(st.cb_id);
    for (uint32_t i = 0; i < burst_group_count(words, st.burst_group_word); ++i) {
      const api::NocTransferRecord t = burst_transfer(words, st.burst_group_word, i);
      noc_async_read(burst_noc_addr(st, t), dst, t.size_bytes, noc_);
      dst += t.size_bytes;
    }
    noc_async_read_barrier(noc_);
    cb_push_back(static_cast<int32_t>(st.cb_id), static_cast<int32_t>(args_.packet_size_in_pages));
    next_group(st);
    if (st.burst_transfers_left == 0) {
      complete(st);
    }
    return true;
  }

  bool write_burst_group(Stream& st) {
    const bool fused = st.plan.header.code == CommandCode::NOC_WRITE_AND_ATOMIC_INC;
    if (st.burst_transfers_left == 0) {
      if (fused && st.plan.burst.total_transfers == 0) {
        increment(st, target_semaphore_noc_addr(st), st.plan.inc);
      }
      return complete(st);
    }
    if (!cb_data(st)) {
      return false;
    }
    const uint32_t* words = st.reader.words();
    const uint32_t count = burst_group_count(words, st.burst_group_word);
    const bool last_group = count == st.burst_transfers_left;
    uint32_t src = get_read_ptr(st.cb_id);
    for (uint32_t i = 0; i < count; ++i) {
      const api::NocTransferRecord t = burst_transfer(words, st.burst_group_word, i);
      if (fused && last_group && i + 1 == count) {
        write_out_fused(st, src, burst_noc_addr(st, t), t.size_bytes, target_semaphore_noc_addr(st), st.plan.inc);
      } else {
        write_out(st, src, burst_noc_addr(st, t), t.size_bytes);
      }
      src += t.size_bytes;
    }
    noc_async_writes_flushed(noc_);
    cb_pop_front(static_cast<int32_t>(st.cb_id), static_cast<int32_t>(args_.packet_size_in_pages));
    next_group(st);
    if (st.burst_transfers_left == 0) {
      complete(st);
    }
    return true;
  }

  const InterpreterArgs& args_;
  const uint32_t* arg_words_;
  uint8_t noc_;
  PacketHeaderPool headers_;
  WorkerToFabricEdmSender forward_;
  WorkerToFabricEdmSender backward_;
  Stream streams_[interpreter::kMaxStreams];
};

}  // namespace
}  // namespace cclmesh::kernels

void kernel_main_ccl_interpreter() {
  using namespace cclmesh::kernels;
  const uint32_t num_streams = get_compile_time_arg_val(static_cast<int>(interpreter::kCtNumStreams));
  const uint32_t header_cb_id = get_compile_time_arg_val(static_cast<int>(interpreter::kCtPacketHeaderCbId));
  const uint32_t num_args = get_num_args();
  if (num_args == 0) {
    kernel_fault(cclmesh::api::fault_code(cclmesh::api::KernelFaultCode::BAD_ARGS), cclmesh::api::kFaultNoCommand, 0);
  }
  const uint32_t* words = get_arg_ptr(0);
  InterpreterArgs args{};
  const ArgsFault parsed = parse_interpreter_args(num_streams, words, num_args, args);
  if (!parsed.ok()) {
    kernel_fault(parsed.code, cclmesh::api::kFaultNoCommand, parsed.word);
  }
  Interpreter interp(args, words, header_cb_id, my_noc_index());
  interp.run();
}
