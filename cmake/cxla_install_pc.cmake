# Installs cxla.pc, at install time: the prefix it names is the one being installed to
# (cmake --install --prefix DIR overrides CMAKE_INSTALL_PREFIX), without DESTDIR, which
# only stages the files. Included from the install script that CMakeLists.txt writes,
# with CXLA_PC_TEMPLATE, CXLA_PC_WORK, CXLA_PC_LIBDIR, CXLA_PC_INCLUDEDIR, CXLA_PC_VERSION.
set(CXLA_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
set(CXLA_PC_INSTALL_LIBDIR "${CXLA_PC_LIBDIR}")
foreach(dir LIBDIR INCLUDEDIR)
  if(NOT IS_ABSOLUTE "${CXLA_PC_${dir}}")
    set(CXLA_PC_${dir} "\${prefix}/${CXLA_PC_${dir}}")
  endif()
endforeach()
configure_file("${CXLA_PC_TEMPLATE}" "${CXLA_PC_WORK}" @ONLY)
if(IS_ABSOLUTE "${CXLA_PC_INSTALL_LIBDIR}")
  set(dest "${CXLA_PC_INSTALL_LIBDIR}/pkgconfig")
else()
  set(dest "${CMAKE_INSTALL_PREFIX}/${CXLA_PC_INSTALL_LIBDIR}/pkgconfig")
endif()
file(INSTALL DESTINATION "${dest}" TYPE FILE FILES "${CXLA_PC_WORK}")
