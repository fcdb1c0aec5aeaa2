# SrnicVerilate.cmake: build a Verilator model of an RTL top as a static library.
#
#   srnic_verilated_lib(<target> TOP <module> FILELIST <file.f> MODE fast|coverage|debug
#                       [VERILATOR_ARGS <args>...])
#
# FILELIST names a .f file (relative to the repository root or absolute) listing SystemVerilog
# sources one per line, relative to the repository root. Blank lines and lines starting with
# '#' or '//' are ignored; '+incdir+<dir>' adds an include directory; other lines starting with
# '-' or '+' are passed to Verilator unchanged. rtl/lint.vlt (project-wide waivers), if present,
# is added to every model.
#
# SRNIC_RTL_DIR (cache variable, default <root>/rtl) is where relative sources below rtl/ are
# taken from: tools/mutate points it at a mirrored, mutated copy of rtl/ so that every model of
# the project (block benches included) is built from the mutant.
#
#   srnic_rtl_test(<test> FILELIST <file.f> TARGETS <target>...)
#
# records that CTest test <test> exercises the RTL of <file.f> and needs <target>s built; the
# list is written to <build>/rtl_tests.tsv (srnic_write_rtl_tests(), called once at the end of
# the top-level CMakeLists.txt) for tools/mutate, which runs the tests of a mutated file.
#
# Modes (all use -Wall, --x-initial unique and OPT_FAST -O2):
#   fast      model class V<top>
#   coverage  model class V<top>_cov, --coverage-line --coverage-toggle
#   debug     model class V<top>_dbg, --assert --trace-fst --trace-structs
# Link the target into an executable and include "V<top>.h" (or _cov/_dbg). Each library
# carries its own copy of the Verilator runtime, so link at most one of them per executable.

find_package(verilator REQUIRED HINTS $ENV{VERILATOR_ROOT} /usr/share/verilator)
find_package(Threads REQUIRED)

if(NOT SRNIC_ROOT)
  get_filename_component(SRNIC_ROOT "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
endif()
set(SRNIC_RTL_DIR "${SRNIC_ROOT}/rtl" CACHE PATH
    "directory relative rtl/ sources of the file lists are read from (tools/mutate: a mirror)")

# Reads a .f file into source paths and extra Verilator arguments.
function(_srnic_read_filelist listfile out_sources out_args)
  file(STRINGS "${listfile}" lines)
  set(sources "")
  set(args "")
  foreach(line IN LISTS lines)
    string(STRIP "${line}" line)
    if(line STREQUAL "" OR line MATCHES "^#" OR line MATCHES "^//")
      continue()
    elseif(line MATCHES "^\\+incdir\\+(.*)$")
      list(APPEND args "-I${SRNIC_ROOT}/${CMAKE_MATCH_1}")
    elseif(line MATCHES "^[-+]")
      list(APPEND args "${line}")
    else()
      if(IS_ABSOLUTE "${line}")
        set(path "${line}")
      elseif(line MATCHES "^rtl/(.*)$" AND NOT line STREQUAL "rtl/lint.vlt")
        set(path "${SRNIC_RTL_DIR}/${CMAKE_MATCH_1}")
      else()
        set(path "${SRNIC_ROOT}/${line}")
      endif()
      if(NOT EXISTS "${path}")
        message(FATAL_ERROR "${listfile}: source '${line}' does not exist")
      endif()
      list(APPEND sources "${path}")
    endif()
  endforeach()
  if(NOT sources)
    message(FATAL_ERROR "${listfile}: no sources listed")
  endif()
  set(${out_sources} "${sources}" PARENT_SCOPE)
  set(${out_args} "${args}" PARENT_SCOPE)
endfunction()

function(srnic_verilated_lib target)
  cmake_parse_arguments(ARG "" "TOP;FILELIST;MODE" "VERILATOR_ARGS" ${ARGN})
  if(NOT ARG_TOP OR NOT ARG_FILELIST OR NOT ARG_MODE)
    message(FATAL_ERROR "srnic_verilated_lib(${target}): TOP, FILELIST and MODE are required")
  endif()
  if(IS_ABSOLUTE "${ARG_FILELIST}")
    set(listfile "${ARG_FILELIST}")
  else()
    set(listfile "${SRNIC_ROOT}/${ARG_FILELIST}")
  endif()
  if(NOT EXISTS "${listfile}")
    message(FATAL_ERROR "srnic_verilated_lib(${target}): file list ${listfile} not found")
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${listfile}")
  _srnic_read_filelist("${listfile}" sources list_args)
  # Project-wide Verilator waivers apply to every model, as in tools/lint.
  set(vlt "${SRNIC_ROOT}/rtl/lint.vlt")
  if(EXISTS "${vlt}" AND NOT "${vlt}" IN_LIST sources)
    list(PREPEND sources "${vlt}")
  endif()

  set(common_args -Wall --x-initial unique ${list_args} ${ARG_VERILATOR_ARGS})
  if(ARG_MODE STREQUAL "fast")
    set(prefix "V${ARG_TOP}")
    set(mode_args "")
  elseif(ARG_MODE STREQUAL "coverage")
    set(prefix "V${ARG_TOP}_cov")
    set(mode_args --coverage-line --coverage-toggle)
  elseif(ARG_MODE STREQUAL "debug")
    set(prefix "V${ARG_TOP}_dbg")
    set(mode_args --assert --trace-fst --trace-structs)
  else()
    message(FATAL_ERROR "srnic_verilated_lib(${target}): MODE must be fast, coverage or debug, not '${ARG_MODE}'")
  endif()

  add_library(${target} STATIC)
  verilate(${target}
    PREFIX ${prefix}
    TOP_MODULE ${ARG_TOP}
    SOURCES ${sources}
    VERILATOR_ARGS ${common_args} ${mode_args}
    OPT_FAST -O2)
  target_link_libraries(${target} PUBLIC Threads::Threads)
  # The flags verilator-config.cmake finds for the compiler (warnings Verilated code is known to
  # raise, -faligned-new, ...) but does not apply itself.
  target_compile_options(${target} PRIVATE ${VERILATOR_CFLAGS})
  # Verilator runtime and generated headers are not ours to warn about: mark them SYSTEM.
  get_target_property(vincs ${target} INTERFACE_INCLUDE_DIRECTORIES)
  set_property(TARGET ${target} APPEND PROPERTY INTERFACE_SYSTEM_INCLUDE_DIRECTORIES ${vincs})
  if(ARG_MODE STREQUAL "debug")
    find_package(ZLIB REQUIRED)
    target_link_libraries(${target} PUBLIC ZLIB::ZLIB)
  endif()
  # Consumers that include verilated_cov.h / verilated_fst_c.h need the same VM_* switches.
  if(ARG_MODE STREQUAL "coverage")
    target_compile_definitions(${target} INTERFACE VM_COVERAGE=1)
  elseif(ARG_MODE STREQUAL "debug")
    target_compile_definitions(${target} INTERFACE VM_TRACE=1 VM_TRACE_FST=1)
  endif()
  set_target_properties(${target} PROPERTIES SRNIC_VERILATED_PREFIX ${prefix})
endfunction()

function(srnic_rtl_test test)
  cmake_parse_arguments(A "" "FILELIST" "TARGETS" ${ARGN})
  if(NOT A_FILELIST OR NOT A_TARGETS)
    message(FATAL_ERROR "srnic_rtl_test(${test}): FILELIST and TARGETS are required")
  endif()
  if(NOT IS_ABSOLUTE "${A_FILELIST}")
    set(A_FILELIST "${SRNIC_ROOT}/${A_FILELIST}")
  endif()
  string(REPLACE ";" "," targets "${A_TARGETS}")
  set_property(GLOBAL APPEND PROPERTY SRNIC_RTL_TESTS "${test}\t${A_FILELIST}\t${targets}")
endfunction()

function(srnic_write_rtl_tests)
  get_property(lines GLOBAL PROPERTY SRNIC_RTL_TESTS)
  set(text "# test<TAB>file list<TAB>build targets: CTest tests that exercise RTL (tools/mutate)\n")
  foreach(l IN LISTS lines)
    string(APPEND text "${l}\n")
  endforeach()
  file(WRITE "${CMAKE_BINARY_DIR}/rtl_tests.tsv" "${text}")
endfunction()
