package virt

import (
	"slices"
	"testing"
)

// A host as qemu:///system reports it (trimmed), two NUMA cells.
const hostCaps = `<capabilities><host><uuid>x</uuid>
<cpu><arch>x86_64</arch><model>EPYC-Genoa</model><vendor>AMD</vendor><topology sockets='2' dies='1' cores='32' threads='2'/></cpu>
<topology><cells num='2'>
<cell id='0'><memory unit='KiB'>263921020</memory><cpus num='64'/></cell>
<cell id='1'><memory unit='KiB'>264215452</memory><cpus num='64'/></cell>
</cells></topology></host></capabilities>`

const domCaps = `<domainCapabilities><path>/usr/bin/qemu-system-x86_64</path><domain>kvm</domain><arch>x86_64</arch>
<cpu><mode name='host-passthrough' supported='yes'/><mode name='maximum' supported='yes'/><mode name='custom' supported='no'/></cpu>
<devices><disk supported='yes'/><graphics supported='yes'/><tpm supported='no'/></devices>
<features><gic supported='no'/><sev supported='yes'/><sgx supported='no'/></features></domainCapabilities>`

func TestParseCapabilities(t *testing.T) {
	var h Host
	if err := parseCapabilities(hostCaps, &h); err != nil {
		t.Fatal(err)
	}
	if h.Arch != "x86_64" || h.CPUModel != "EPYC-Genoa" || h.Sockets != 2 || h.Cores != 32 || h.Threads != 2 {
		t.Fatalf("cpu: %+v", h)
	}
	want := []Cell{{ID: 0, CPUs: 64, MemoryBytes: 263921020 << 10}, {ID: 1, CPUs: 64, MemoryBytes: 264215452 << 10}}
	if !slices.Equal(h.Cells, want) {
		t.Fatalf("cells %+v, want %+v", h.Cells, want)
	}
	if err := parseCapabilities(`<capabilities><host><topology><cells><cell id='0'><memory unit='parsecs'>1</memory></cell></cells></topology></host></capabilities>`, &h); err == nil {
		t.Fatal("an unknown memory unit was accepted")
	}
}

func TestParseDomainCapabilities(t *testing.T) {
	var h Host
	if err := parseDomainCapabilities(domCaps, &h); err != nil {
		t.Fatal(err)
	}
	if h.DomainArch != "x86_64" || h.DomainVirtType != "kvm" {
		t.Fatalf("%+v", h)
	}
	for got, want := range map[*[]string][]string{
		&h.CPUModes: {"host-passthrough", "maximum"}, &h.Devices: {"disk", "graphics"}, &h.Features: {"sev"},
	} {
		if !slices.Equal(*got, want) {
			t.Errorf("got %v, want %v", *got, want)
		}
	}
}
