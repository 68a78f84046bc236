# Writes the linker version script of libcxla.so: the functions declared in the public
# headers (include/cxla/*.h) are exported, every other symbol is local. Run at build time
# by CMakeLists.txt:
#   cmake -DCC=<C compiler> -DINCLUDE_DIR=<src>/include -DOUTPUT=<file> -P cxla_exports.cmake
# Each header is preprocessed by the C compiler (comments and macros gone), so only real
# declarations count: an identifier cxla_* followed by '(' but not '(*' (a function) or an extern
# object declaration.
file(GLOB headers "${INCLUDE_DIR}/cxla/*.h")
list(SORT headers)
set(names "")
foreach(header ${headers})
  execute_process(COMMAND "${CC}" -E -P -std=c11 "-I${INCLUDE_DIR}" "${header}"
                  OUTPUT_VARIABLE text RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "cxla_exports: cannot preprocess ${header}: ${err}")
  endif()
  # "cxla_x (" not followed by '*': "cxla_status (*fn)(...)" is a function pointer type.
  string(REGEX MATCHALL "cxla_[A-Za-z0-9_]*[ \t\n]*\\([ \t\n]*[^* \t\n]" calls "${text}")
  foreach(m ${calls})
    string(REGEX REPLACE "[ \t\n]*\\(.*$" "" m "${m}")
    list(APPEND names "${m}")
  endforeach()
  string(REGEX MATCHALL "extern[^;({]*[ \t\n*]cxla_[A-Za-z0-9_]*[ \t\n]*(\\[[^]]*\\])?[ \t\n]*;"
         objects "${text}")
  foreach(m ${objects})
    string(REGEX MATCH "cxla_[A-Za-z0-9_]*[ \t\n]*(\\[[^]]*\\])?[ \t\n]*;$" m "${m}")
    string(REGEX REPLACE "[^A-Za-z0-9_].*$" "" m "${m}")
    list(APPEND names "${m}")
  endforeach()
endforeach()
list(REMOVE_DUPLICATES names)
list(SORT names)
set(script "/* Generated from include/cxla/*.h by cmake/cxla_exports.cmake. */\n{\n  global:\n")
foreach(n ${names})
  string(APPEND script "    ${n};\n")
endforeach()
string(APPEND script "  local:\n    *;\n};\n")
# Rewritten only when it changes, so that the library is relinked only then.
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
else()
  set(old "")
endif()
if(NOT old STREQUAL script)
  file(WRITE "${OUTPUT}" "${script}")
endif()
