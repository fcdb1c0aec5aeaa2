# FindPCAP: libpcap (Debian: libpcap-dev) as the imported target PCAP::PCAP.
find_path(PCAP_INCLUDE_DIR pcap.h)
find_library(PCAP_LIBRARY pcap)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(PCAP REQUIRED_VARS PCAP_LIBRARY PCAP_INCLUDE_DIR
                                  REASON_FAILURE_MESSAGE "install libpcap-dev, or run tools/setup")
if(PCAP_FOUND AND NOT TARGET PCAP::PCAP)
  add_library(PCAP::PCAP UNKNOWN IMPORTED)
  set_target_properties(PCAP::PCAP PROPERTIES IMPORTED_LOCATION "${PCAP_LIBRARY}"
                                              INTERFACE_INCLUDE_DIRECTORIES "${PCAP_INCLUDE_DIR}")
endif()
