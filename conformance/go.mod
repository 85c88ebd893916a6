// Module root only: every build selects a release with -modfile=mod/vX.Y.Z.mod (see README.md).
module kdiagnose/conformance

go 1.24.0
