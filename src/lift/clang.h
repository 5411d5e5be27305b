/*
 * clang.h - the libclang functions the lift calls, as one table of pointers
 * filled by dlsym (private to src/lift/): cuco never links libclang, so it
 * starts on machines without it. Types come from clang-c/Index.h.
 */
#ifndef CUCO_LIFT_CLANG_H
#define CUCO_LIFT_CLANG_H

#include <clang-c/CXCompilationDatabase.h>
#include <clang-c/Index.h>

/* Every function of libclang that src/lift calls: X(name). */
#define CUCO_LIFT_CLANG_FUNCTIONS(X)                       \
	X(clang_getClangVersion)                           \
	X(clang_getCString)                                \
	X(clang_disposeString)                             \
	X(clang_createIndex)                               \
	X(clang_disposeIndex)                              \
	X(clang_parseTranslationUnit2)                     \
	X(clang_disposeTranslationUnit)                    \
	X(clang_getTranslationUnitCursor)                  \
	X(clang_visitChildren)                             \
	X(clang_getInclusions)                             \
	X(clang_getIncludedFile)                           \
	X(clang_getFileName)                               \
	X(clang_getFile)                                   \
	X(clang_getCursorKind)                             \
	X(clang_getCursorSpelling)                         \
	X(clang_getCursorLocation)                         \
	X(clang_getCursorExtent)                           \
	X(clang_getRangeStart)                             \
	X(clang_getRangeEnd)                               \
	X(clang_getFileLocation)                           \
	X(clang_getLocationForOffset)                      \
	X(clang_Location_isInSystemHeader)                 \
	X(clang_getCursorReferenced)                       \
	X(clang_getCanonicalCursor)                        \
	X(clang_getCursorUSR)                              \
	X(clang_isCursorDefinition)                        \
	X(clang_getCursorSemanticParent)                   \
	X(clang_Cursor_isNull)                             \
	X(clang_getNullCursor)                             \
	X(clang_getSpecializedCursorTemplate)              \
	X(clang_Cursor_getNumArguments)                    \
	X(clang_Cursor_getArgument)                        \
	X(clang_getNumOverloadedDecls)                     \
	X(clang_getOverloadedDecl)                         \
	X(clang_getCursorType)                             \
	X(clang_getTypeSpelling)                           \
	X(clang_getCanonicalType)                          \
	X(clang_getPointeeType)                            \
	X(clang_isConstQualifiedType)                      \
	X(clang_getTypeDeclaration)                        \
	X(clang_getCursorPrettyPrinted)                    \
	X(clang_Cursor_Evaluate)                           \
	X(clang_EvalResult_getKind)                        \
	X(clang_EvalResult_isUnsignedInt)                  \
	X(clang_EvalResult_getAsLongLong)                  \
	X(clang_EvalResult_getAsUnsigned)                  \
	X(clang_EvalResult_dispose)                        \
	X(clang_getNumDiagnostics)                         \
	X(clang_getDiagnostic)                             \
	X(clang_disposeDiagnostic)                         \
	X(clang_getDiagnosticSeverity)                     \
	X(clang_getDiagnosticLocation)                     \
	X(clang_getDiagnosticSpelling)                     \
	X(clang_getDiagnosticOption)                       \
	X(clang_CompilationDatabase_fromDirectory)         \
	X(clang_CompilationDatabase_getAllCompileCommands) \
	X(clang_CompilationDatabase_dispose)               \
	X(clang_CompileCommands_getSize)                   \
	X(clang_CompileCommands_getCommand)                \
	X(clang_CompileCommands_dispose)                   \
	X(clang_CompileCommand_getDirectory)               \
	X(clang_CompileCommand_getFilename)                \
	X(clang_CompileCommand_getNumArgs)                 \
	X(clang_CompileCommand_getArg)

/* The table: one pointer per function, named as the function. */
struct cuco_lift_clang {
#define CUCO_LIFT_CLANG_FIELD(name) __typeof__(&name) name;
	CUCO_LIFT_CLANG_FUNCTIONS(CUCO_LIFT_CLANG_FIELD)
#undef CUCO_LIFT_CLANG_FIELD
	int major; /* the version's major number, 0 when unknown */
};

/*
 * The loaded table (cuco_lift_clang_load first); NULL before a successful
 * load. Lives as long as the process.
 */
const struct cuco_lift_clang *cuco_lift_clang(void);

#endif
