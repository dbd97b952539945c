// NVML's C ABI as the suite calls it, and the resolved function pointers
// (Nvml::Api): shared by nvml.cpp (loading, clocks, the sampler) and
// nvml_topology.cpp (the node's topology).  NVML is loaded at run time
// (dlopen), so nothing here includes nvml.h.
#pragma once

#include "rl/bench/nvml.hpp"

namespace rl::bench {
namespace nvml_abi {

// NVML's C ABI, as much of it as we call.  nvmlReturn_t is an int enum
// (0 = NVML_SUCCESS); nvmlDevice_t an opaque pointer; nvmlEnableState_t an int
// enum (1 = enabled); nvmlClockType_t: 1 = SM, 2 = memory.
using NvmlReturn = int;
using NvmlDevice = void*;
constexpr NvmlReturn kNvmlSuccess = 0;
constexpr int kNvmlClockSm = 1;
constexpr int kNvmlClockMem = 2;

using InitFn = NvmlReturn (*)();
using ShutdownFn = NvmlReturn (*)();
using ErrorStringFn = const char* (*)(NvmlReturn);
using GetHandleByUuidFn = NvmlReturn (*)(const char*, NvmlDevice*);
using GetHandleByIndexFn = NvmlReturn (*)(unsigned, NvmlDevice*);
using SystemGetDriverVersionFn = NvmlReturn (*)(char*, unsigned);
using GetClockInfoFn = NvmlReturn (*)(NvmlDevice, int, unsigned*);
using GetEccModeFn = NvmlReturn (*)(NvmlDevice, int*, int*);
using GetPersistenceModeFn = NvmlReturn (*)(NvmlDevice, int*);
using GetPowerLimitFn = NvmlReturn (*)(NvmlDevice, unsigned*);
using GetReasonsFn = NvmlReturn (*)(NvmlDevice, unsigned long long*);
using GetPowerUsageFn = NvmlReturn (*)(NvmlDevice, unsigned*);        // milliwatts
using GetTemperatureFn = NvmlReturn (*)(NvmlDevice, int, unsigned*);  // 0 = NVML_TEMPERATURE_GPU
constexpr int kNvmlTemperatureGpu = 0;

// Topology (issue 29).  nvmlPciInfo_t as nvml.h lays it out.
struct NvmlPciInfo {
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
};
using GetTopologyAncestorFn = NvmlReturn (*)(NvmlDevice, NvmlDevice, int*);
using GetLinkStateFn = NvmlReturn (*)(NvmlDevice, unsigned, int*);         // nvmlEnableState_t
using GetLinkVersionFn = NvmlReturn (*)(NvmlDevice, unsigned, unsigned*);  // nvmlNvlinkVersion_t
using GetLinkRemotePciFn = NvmlReturn (*)(NvmlDevice, unsigned, NvmlPciInfo*);
using GetLinkRemoteTypeFn = NvmlReturn (*)(NvmlDevice, unsigned,
                                           int*);  // nvmlIntNvLinkDeviceType_t
using GetPciInfoFn = NvmlReturn (*)(NvmlDevice, NvmlPciInfo*);
using GetUnsignedFn = NvmlReturn (*)(NvmlDevice, unsigned*);
using GetMemoryAffinityFn = NvmlReturn (*)(NvmlDevice, unsigned, unsigned long*, int);
constexpr unsigned kNvmlNvlinkMaxLinks = 18;  // NVML_NVLINK_MAX_LINKS (nvml.h, R535 and later)
constexpr int kNvmlNvlinkDeviceTypeSwitch = 2;
constexpr int kNvmlAffinityScopeNode = 0;

}  // namespace nvml_abi

struct Nvml::Api {
  nvml_abi::InitFn init = nullptr;
  nvml_abi::ShutdownFn shutdown = nullptr;
  nvml_abi::ErrorStringFn error_string = nullptr;
  nvml_abi::GetHandleByUuidFn handle_by_uuid = nullptr;
  nvml_abi::GetHandleByIndexFn handle_by_index = nullptr;
  nvml_abi::SystemGetDriverVersionFn driver_version = nullptr;
  nvml_abi::GetClockInfoFn clock = nullptr;
  nvml_abi::GetClockInfoFn max_clock = nullptr;
  nvml_abi::GetEccModeFn ecc = nullptr;
  nvml_abi::GetPersistenceModeFn persistence = nullptr;
  nvml_abi::GetPowerLimitFn power_limit = nullptr;
  nvml_abi::GetReasonsFn reasons = nullptr;
  nvml_abi::GetPowerUsageFn power = nullptr;
  nvml_abi::GetTemperatureFn temperature = nullptr;
  nvml_abi::GetTopologyAncestorFn common_ancestor = nullptr;
  nvml_abi::GetLinkStateFn link_state = nullptr;
  nvml_abi::GetLinkVersionFn link_version = nullptr;
  nvml_abi::GetLinkRemotePciFn link_remote_pci = nullptr;
  nvml_abi::GetLinkRemoteTypeFn link_remote_type = nullptr;
  nvml_abi::GetPciInfoFn pci_info = nullptr;
  nvml_abi::GetUnsignedFn pcie_generation = nullptr, pcie_width = nullptr;
  nvml_abi::GetUnsignedFn pcie_max_generation = nullptr, pcie_max_width = nullptr;
  nvml_abi::GetMemoryAffinityFn memory_affinity = nullptr;
};

}  // namespace rl::bench
