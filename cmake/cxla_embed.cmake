# Writes a C source that defines `const char *FUNCTION(void)` returning the text of INPUT
# (a header the C emitter pastes into generated sources), as a byte array: a string
# literal longer than 4095 characters draws -Woverlength-strings under -Wpedantic.
#   cmake -DINPUT=file -DOUTPUT=file.c -DFUNCTION=name -DHEADER=include/path.h -P cxla_embed.cmake
file(READ "${INPUT}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
# One line of the array per line of the text.
string(REPLACE "0x0a," "0x0a,\n    " bytes "${bytes}")
get_filename_component(input_name "${INPUT}" NAME)
file(WRITE "${OUTPUT}.tmp"
     "/* Generated from ${input_name} by cmake/cxla_embed.cmake: do not edit. */\n"
     "#include \"${HEADER}\"\n\n"
     "static const char text[] = {\n    ${bytes}0x00};\n\n"
     "const char *${FUNCTION}(void) {\n    return text;\n}\n")
# Only a changed text touches the output (configure_file leaves an equal file alone).
configure_file("${OUTPUT}.tmp" "${OUTPUT}" COPYONLY)
file(REMOVE "${OUTPUT}.tmp")
