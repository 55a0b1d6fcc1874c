#pragma once
// The kernels' entry points. Each is the `kernel_main` of one device program, written against
// the dataflow API (kernels/api/dataflow_api.hpp); the registry (kernel_registry.hpp) maps
// their names to these functions. Argument layouts: kernel_args.hpp.

// Command interpreter: one or two command streams, round robin (REFERENCE §4.7, §4.8).
void kernel_main_ccl_interpreter();
// Persistent 1D fabric router on an ethernet core (REFERENCE §6).
void kernel_main_fabric_router();
// Fabric mux on a Tensix core: several workers share one router's worker channel (REFERENCE §6.3).
void kernel_main_fabric_mux();
// Legacy per-op ERISC data mover (REFERENCE §5).
void kernel_main_legacy_edm();
// The legacy-EDM all-gather's per-direction sender and receiver workers (REFERENCE 7.4).
void kernel_main_legacy_all_gather_sender();
void kernel_main_legacy_all_gather_receiver();
// The legacy-EDM reduce-scatter's per-direction sender and receiver workers (REFERENCE 7.5).
void kernel_main_legacy_reduce_scatter_sender();
void kernel_main_legacy_reduce_scatter_receiver();
// out = in0 + in1 over CB pages, fp32 or bf16.
void kernel_main_reduce();
// N tile-padded TILE tensors joined along dim 2 or 3 (all_gather's broadcast fallback).
void kernel_main_concat();
