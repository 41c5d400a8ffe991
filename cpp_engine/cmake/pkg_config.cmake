# cpp_engine.pc: the pkg-config file of the C library (included by CMakeLists.txt
# after the install rules; docs/cpp_engine.md "pkg-config").
#
# Relocatable: `prefix` is ${pcfiledir} plus the relative path from the .pc's
# directory to the prefix (CPE_PREFIX_DIR: the install prefix, or the Python
# package dir under scikit-build-core), so the file is right wherever the tree
# is installed or moved (`cmake --install --prefix` at install time, a venv's
# site-packages). libdir and includedir are relative to it unless the install
# dirs were given as absolute paths.
#
#   Libs          -L${libdir} -lcpp_engine; a static archive adds the C++ runtime
#                 (the C++ compiler's implicit link libraries a C link lacks, GCC:
#                 -lstdc++ -lm) and the thread library, so a C program links it with
#                 `cc main.c $(pkg-config --cflags --libs cpp_engine)`;
#                 a wheel (no development link: wheels hold no symlinks) names the
#                 file, -l:libcpp_engine.so.<M>.<m> (GNU ld, gold, lld).
#   Libs.private  for a shared build, what a --static link would need (the same runtime).
#   Cflags        -I${includedir}; a static build adds -DCPP_ENGINE_STATIC (no dllimport).
#
# Inputs: CPE_PC_DIR, CPE_PREFIX_DIR, CPE_LIB_DIR, CPE_INCLUDE_DIR (relative to the
# install root, or absolute), CPE_LIBRARY_TYPE, CPE_CXX_RUNTIME (static only),
# CPE_SOVERSION, SKBUILD / SKBUILD_STATE.

# "a/b/c" relative to "a" -> "b/c"; "" when equal. `dir` may be absolute (then kept).
function(_cpe_pc_rel out base dir)
  if(IS_ABSOLUTE "${dir}")
    set(${out} "${dir}" PARENT_SCOPE)
    return()
  endif()
  file(RELATIVE_PATH _r "/_cpe_root/${base}" "/_cpe_root/${dir}")
  string(REGEX REPLACE "/+$" "" _r "${_r}")
  set(${out} "${_r}" PARENT_SCOPE)
endfunction()

# ${prefix}/<rel>, or ${prefix} for "", or the absolute dir itself.
function(_cpe_pc_var out dir)
  if(IS_ABSOLUTE "${dir}")
    set(${out} "${dir}" PARENT_SCOPE)
    return()
  endif()
  _cpe_pc_rel(_r "${CPE_PREFIX_DIR}" "${dir}")
  if(_r STREQUAL "")
    set(${out} "\${prefix}" PARENT_SCOPE)
  else()
    set(${out} "\${prefix}/${_r}" PARENT_SCOPE)
  endif()
endfunction()

_cpe_pc_rel(_cpe_pc_up "${CPE_PC_DIR}" "${CPE_PREFIX_DIR}")
set(CPE_PC_PREFIX "\${pcfiledir}/${_cpe_pc_up}")
_cpe_pc_var(CPE_PC_LIBDIR "${CPE_LIB_DIR}")
_cpe_pc_var(CPE_PC_INCLUDEDIR "${CPE_INCLUDE_DIR}")

# The C++ runtime as linker flags (a name -> -lname; a path or flag as given).
set(_cpe_runtime_flags "")
foreach(_l IN LISTS CPE_CXX_RUNTIME)
  if(_l MATCHES "^-" OR IS_ABSOLUTE "${_l}")
    list(APPEND _cpe_runtime_flags "${_l}")
  else()
    list(APPEND _cpe_runtime_flags "-l${_l}")
  endif()
endforeach()
if(CMAKE_THREAD_LIBS_INIT)
  list(APPEND _cpe_runtime_flags ${CMAKE_THREAD_LIBS_INIT})
endif()
list(JOIN _cpe_runtime_flags " " _cpe_runtime_flags)

if(DEFINED SKBUILD AND NOT "${SKBUILD_STATE}" STREQUAL "editable")
  set(_cpe_pc_link "-l:libcpp_engine.so.${CPE_SOVERSION}")
else()
  set(_cpe_pc_link "-lcpp_engine")
endif()
if(CPE_LIBRARY_TYPE STREQUAL "STATIC")
  set(CPE_PC_LIBS "-L\${libdir} ${_cpe_pc_link} ${_cpe_runtime_flags}")
  set(CPE_PC_LIBS_PRIVATE "")
  set(CPE_PC_CFLAGS "-I\${includedir} -DCPP_ENGINE_STATIC")
else()
  set(CPE_PC_LIBS "-L\${libdir} ${_cpe_pc_link}")
  set(CPE_PC_LIBS_PRIVATE "${_cpe_runtime_flags}")
  set(CPE_PC_CFLAGS "-I\${includedir}")
endif()
string(STRIP "${CPE_PC_LIBS}" CPE_PC_LIBS)

configure_file(${CMAKE_CURRENT_LIST_DIR}/cpp_engine.pc.in ${CMAKE_CURRENT_BINARY_DIR}/cpp_engine.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/cpp_engine.pc DESTINATION ${CPE_PC_DIR})
