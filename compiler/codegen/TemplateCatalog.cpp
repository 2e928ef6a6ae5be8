//===- TemplateCatalog.cpp - Reads the template library with libTooling -===//
