#!/usr/bin/python3
"""Agreement lifecycle against a running wsag-server, driven only by Python zeep and the WSDLs.

Usage: zeep_lifecycle.py BASE_URL        (e.g. http://127.0.0.1:8080)

Steps, each a zeep operation call built from the served WSDLs (no hand-written XML):
  1. AgreementFactory.GetResourceProperty(wsag:Template) over SOAP 1.1 and 1.2; pick deadline-job.
  2. AgreementFactory.CreateAgreement with an AgreementOffer made of that template object's
     Name, Context and Terms.
  3. Agreement.GetResourceProperty(wsag:Terms) and (wsag:AgreementId), addressed with the
     reference parameters of the returned EPR as SOAP headers (_soapheaders).
  4. AgreementState.GetResourceProperty(wsag:AgreementState): Observed (SOAP 1.1 and 1.2).
  5. Agreement.Terminate (SOAP 1.2), then AgreementState again: Terminated (SOAP 1.1 and 1.2,
     the second time through GetResourcePropertyDocument).
  6. A typed fault: GetResourceProperty of a property the resource does not have answers a SOAP
     Fault whose detail is a bf:BaseFault (declared in the WSDL) with the protocol fault code.

Prints one JSON line; exit status 0 when every check held, 1 on a mismatch, 2 on an error.
"""

import copy
import json
import sys
import traceback
import warnings

warnings.simplefilter("ignore", DeprecationWarning)  # zeep 4.2 imports the deprecated cgi module

from lxml import etree  # noqa: E402  (only to recognise and annotate elements zeep hands back)
from zeep import Client, xsd  # noqa: E402
from zeep.exceptions import Fault  # noqa: E402
from zeep.plugins import HistoryPlugin  # noqa: E402
from zeep.xsd.elements.indicators import Group, OrderIndicator  # noqa: E402

WSAG = "http://schemas.ggf.org/graap/2007/03/ws-agreement"
WSA = "http://www.w3.org/2005/08/addressing"
BF = "http://docs.oasis-open.org/wsrf/bf-2"
SRV = "http://schemas.wsag-server.org/2026/11/server"


class VerbatimAnyType(xsd.AnyType):
    """xs:anyType that serializes parsed element content again.

    zeep parses an xs:anyType element with element children into the list of those lxml
    elements, but serializes a list as its Python repr text. This type appends the elements."""

    def render(self, node, value, xsd_type=None, render_path=None):
        if isinstance(value, list) and value and all(isinstance(v, etree._Element) for v in value):
            node.extend(copy.deepcopy(v) for v in value)
            return
        super().render(node, value, xsd_type, render_path)


def keep_foreign_content_verbatim(xsd_type, seen=None):
    """Makes zeep round-trip the wildcard and xs:anyType content of the types under xsd_type.

    zeep (4.2) resolves lax/strict wildcard content against the known global elements and keeps
    only the value: a jsdl:JobDefinition becomes a bare JobDefinition_Type object and
    sla:Interconnect a bare str, so the element name is lost and zeep refuses (or is unable) to
    serialize it again. With processContents="skip" zeep keeps the original lxml elements, which
    it serializes verbatim; xs:anyType elements get VerbatimAnyType (see above)."""
    seen = set() if seen is None else seen
    if id(xsd_type) in seen or not isinstance(xsd_type, xsd.ComplexType):
        return
    seen.add(id(xsd_type))

    def visit(particle):
        if isinstance(particle, xsd.Any):
            particle.process_contents = "skip"
        elif isinstance(particle, xsd.Element):
            if type(particle.type) is xsd.AnyType:
                particle.type = VerbatimAnyType()
            else:
                keep_foreign_content_verbatim(particle.type, seen)
        elif isinstance(particle, OrderIndicator):
            for child in particle:
                visit(child)
        elif isinstance(particle, Group):
            visit(particle.child)

    for _name, particle in xsd_type.elements_nested:
        visit(particle)


def declared_child(value, name, namespace):
    """value.<name>, also when zeep put that element into a preceding wildcard.

    zeep ignores xs:any/@namespace (python-zeep#900): in wsag:AgreementStateType (a wildcard
    ##other minOccurs=0, then wsag:State) and bf:BaseFaultType (##other*, then bf:Timestamp,
    bf:ErrorCode, ...) the leading wildcard swallows the declared elements, which zeep then
    returns unparsed in value._value_1 while value.State / value.ErrorCode stay None."""
    direct = getattr(value, name, None)
    if direct is not None and direct != []:
        return direct
    swallowed = getattr(value, "_value_1", None)
    for element in swallowed if isinstance(swallowed, list) else [swallowed]:
        if isinstance(element, etree._Element) and element.tag == f"{{{namespace}}}{name}":
            return element.text.strip() if element.text else ""
    return None


def canonical(envelope, name, holder):
    """Exclusive C14N of the wsag:Terms of the wsag:<holder> named <name> in an envelope."""
    for element in envelope.iter(f"{{{WSAG}}}{holder}"):
        if element.findtext(f"{{{WSAG}}}Name") == name:
            terms = element.find(f"{{{WSAG}}}Terms")
            return etree.tostring(terms, method="c14n", exclusive=True) if terms is not None else None
    return None


def main(base, result):
    checks = []

    def check(name, actual, expected):
        checks.append({"check": name, "ok": actual == expected, "actual": actual, "expected": expected})
        return actual

    # --- 1. templates ---------------------------------------------------------------------
    factory_history = HistoryPlugin()
    factory = Client(f"{base}/wsag/AgreementFactory?wsdl", plugins=[factory_history])
    # xs:QName values are sent as text; the prefix must be declared on the envelope, which zeep
    # does for prefixes registered here.
    factory.set_ns_prefix("wsag", WSAG)
    keep_foreign_content_verbatim(factory.get_element("wsag:Template").type)
    keep_foreign_content_verbatim(factory.get_element("wsag:AgreementOffer").type)
    factory11 = factory.bind("AgreementFactoryService", "AgreementFactorySoap11Port")
    factory12 = factory.bind("AgreementFactoryService", "AgreementFactorySoap12Port")

    templates = factory11.GetResourceProperty("wsag:Template")
    result["templates"] = sorted(t.Name for t in templates)
    template_terms_xml = canonical(factory_history.last_received["envelope"], "deadline-job", "Template")
    templates12 = factory12.GetResourceProperty("wsag:Template")
    check("templates over SOAP 1.2", sorted(t.Name for t in templates12), result["templates"])
    template = next((t for t in templates if t.Name == "deadline-job"), None)
    if template is None:
        raise RuntimeError(f"no template named deadline-job among {result['templates']}")
    result["templateId"] = template.TemplateId

    # --- 2. CreateAgreement from the template object -----------------------------------------
    AgreementOffer = factory.get_element("wsag:AgreementOffer")
    offer = AgreementOffer(Name=template.Name, Context=template.Context, Terms=template.Terms)
    created = factory11.CreateAgreement(AgreementOffer=offer)
    # The offer on the wire carries the template's Terms unchanged (compared canonically).
    offer_terms_xml = canonical(factory_history.last_sent["envelope"], "deadline-job", "AgreementOffer")
    check("offer Terms = template Terms", offer_terms_xml == template_terms_xml and offer_terms_xml is not None, True)
    epr = created.CreatedAgreementEPR
    result["eprAddress"] = epr.Address._value_1 if hasattr(epr.Address, "_value_1") else epr.Address
    check("EPR address", result["eprAddress"], f"{base}/wsag/Agreement")
    reference_parameters = [p for p in (epr.ReferenceParameters._value_1 or []) if isinstance(p, etree._Element)]
    ids = [p.text.strip() for p in reference_parameters if p.tag == f"{{{SRV}}}AgreementId"]
    if len(ids) != 1:
        raise RuntimeError(f"the EPR's ReferenceParameters hold no srv:AgreementId: {[p.tag for p in reference_parameters]}")
    agreement_id = result["agreementId"] = ids[0]

    # WS-Addressing SOAP binding: each reference parameter becomes a header block, marked
    # wsa:IsReferenceParameter="true" (zeep deep-copies the headers it is given).
    soap_headers = []
    for parameter in reference_parameters:
        header = copy.deepcopy(parameter)
        header.set(f"{{{WSA}}}IsReferenceParameter", "true")
        soap_headers.append(header)

    # --- 3. Agreement port: Terms, AgreementId --------------------------------------------
    history = HistoryPlugin()
    agreement = Client(f"{base}/wsag/Agreement?wsdl", plugins=[history])
    agreement.set_ns_prefix("wsag", WSAG)
    agreement11 = agreement.bind("AgreementService", "AgreementSoap11Port")
    agreement12 = agreement.bind("AgreementService", "AgreementSoap12Port")

    terms = agreement11.GetResourceProperty("wsag:Terms", _soapheaders=soap_headers)
    check("one wsag:Terms value", len(terms), 1)
    compositor = terms[0].All._value_1
    result["serviceTerms"] = [c["ServiceDescriptionTerm"].Name for c in compositor if c.get("ServiceDescriptionTerm")]
    result["guaranteeTerms"] = [c["GuaranteeTerm"].Name for c in compositor if c.get("GuaranteeTerm")]
    check("service terms", result["serviceTerms"], ["Job"])
    check("guarantee terms", result["guaranteeTerms"], ["CompletionByDeadline"])
    # The Agreement client keeps zeep's typed parsing: the jsdl term is a typed object here.
    job = compositor[0]["ServiceDescriptionTerm"]._value_1
    result["nodeCount"] = int(job.JobDescription.Resources.TotalResourceCount.Exact[0]._value_1)
    check("jsdl:TotalResourceCount/Exact", result["nodeCount"], 4)
    # zeep adds WS-Addressing headers by itself when the WSDL names a wsam:Action: it sends that
    # Action and a MessageID, and the server answers with the response Action and RelatesTo.
    sent, received = history.last_sent["envelope"], history.last_received["envelope"]
    check("wsa:Action sent", sent.findtext(f".//{{{WSA}}}Action"), "http://docs.oasis-open.org/wsrf/rpw-2/GetResourceProperty/GetResourcePropertyRequest")
    check("wsa:RelatesTo = wsa:MessageID", received.findtext(f".//{{{WSA}}}RelatesTo"), sent.findtext(f".//{{{WSA}}}MessageID"))

    ids_read = agreement12.GetResourceProperty("wsag:AgreementId", _soapheaders=soap_headers)
    check("wsag:AgreementId over SOAP 1.2", list(ids_read), [agreement_id])
    content_type = history.last_sent["http_headers"].get("Content-Type", "")
    check("SOAP 1.2 content type", content_type.split(";")[0], "application/soap+xml")
    check("SOAP 1.2 envelope", etree.QName(history.last_sent["envelope"]).namespace, "http://www.w3.org/2003/05/soap-envelope")

    # --- 4. AgreementState: Observed --------------------------------------------------------
    state = Client(f"{base}/wsag/AgreementState?wsdl")
    state.set_ns_prefix("wsag", WSAG)
    state11 = state.bind("AgreementStateService", "AgreementStateSoap11Port")
    state12 = state.bind("AgreementStateService", "AgreementStateSoap12Port")

    def agreement_state(service):
        values = service.GetResourceProperty("wsag:AgreementState", _soapheaders=soap_headers)
        return declared_child(values[0], "State", WSAG) if len(values) == 1 else f"{len(values)} values"

    result["stateBefore"] = {"soap11": agreement_state(state11), "soap12": agreement_state(state12)}
    check("state before Terminate", result["stateBefore"], {"soap11": "Observed", "soap12": "Observed"})

    # --- 5. Terminate, then Terminated ------------------------------------------------------
    # TerminateInput holds exactly one element of any namespace: the reason, as srv:Reason.
    reason = xsd.AnyObject(xsd.Element(f"{{{SRV}}}Reason", xsd.String()), "terminated by the zeep interop test")
    agreement12.Terminate(_value_1=reason, _soapheaders=soap_headers)

    document = state12.GetResourcePropertyDocument(_soapheaders=soap_headers)
    result["stateAfter"] = {"soap11": agreement_state(state11), "soap12": declared_child(document.AgreementState, "State", WSAG)}
    check("state after Terminate", result["stateAfter"], {"soap11": "Terminated", "soap12": "Terminated"})
    check("document's agreement id", document.AgreementId, agreement_id)

    # --- 6. a typed fault ---------------------------------------------------------------------
    BaseFault = state.get_element(f"{{{BF}}}BaseFault")

    def fault_code(service):
        try:
            service.GetResourceProperty("wsag:NoSuchProperty", _soapheaders=soap_headers)
            return "no fault"
        except Fault as fault:
            detail = fault.detail.find(f".//{{{BF}}}BaseFault") if fault.detail is not None else None
            if detail is None:
                return f"no bf:BaseFault in the detail of: {fault.message}"
            base_fault = BaseFault.parse(detail, state.wsdl.types)
            return declared_child(base_fault, "ErrorCode", BF)

    result["faultCode"] = {"soap11": fault_code(state11), "soap12": fault_code(state12)}
    check("bf:BaseFault ErrorCode", result["faultCode"], {"soap11": "InvalidResourcePropertyQName", "soap12": "InvalidResourcePropertyQName"})

    result["ok"] = all(c["ok"] for c in checks)
    result["mismatches"] = [c for c in checks if not c["ok"]]
    result["checks"] = len(checks)
    print(json.dumps(result, default=str))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: zeep_lifecycle.py BASE_URL", file=sys.stderr)
        sys.exit(2)
    partial = {}
    try:
        sys.exit(main(sys.argv[1].rstrip("/"), partial))
    except Exception as error:  # one JSON line either way, for the test to show
        traceback.print_exc()
        print(json.dumps({**partial, "ok": False, "error": f"{type(error).__name__}: {error}"}, default=str))
        sys.exit(2)
